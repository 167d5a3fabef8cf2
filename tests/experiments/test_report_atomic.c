/* test_report_atomic.c — results files are written whole or not at all: the JSON, the gnuplot
 * script and the PNG go to a temporary file in the same directory and are renamed when
 * complete. Failures are real: a child process with a small RLIMIT_FSIZE (SIGXFSZ ignored, so
 * writes fail with EFBIG) writes them, and the directory must then hold no partial, empty or
 * temporary file, and a previous file must be left as it was. Not the content of the files
 * (test_report.c).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "iommulab/report.h"
#include "iommulab/scenario.h"
#include "support/scenario_fixture.h"
#include "support/skip.h"

static const struct ilab_workload_param fixed_params[] = {
	{ "size", 1, 1, 1024, true, "x axis of the plot", false },
	{ NULL, 0, 0, 0, false, NULL, false },
};
static const struct ilab_workload_metric fixed_metrics[] = {
	{ "lat", "ns", "a latency" },
	{ NULL, NULL, NULL },
};

static int fixed_run(const struct ilab_scenario *s, const struct ilab_case *c,
		     struct ilab_case_result *r, char *err, size_t errlen)
{
	(void)s, (void)err, (void)errlen;
	return ilab_case_result_add(r, "lat", "ns", 100 * ilab_case_param(c, "size", 1));
}

static const struct ilab_workload fixed = {
	"test_atomic", fixed_run, "fixed figures for the atomic-write tests", NULL, fixed_params,
	fixed_metrics, false, NULL, NULL,
};

static const char scenario_text[] =
	"name: atomic-test\n"
	"seed: \"043\"\n"
	"title: \"atomic test\"\n"
	"profile: kunpeng920\n"
	"workload: { type: test_atomic }\n"
	"plot: { x: size }\n"
	"cases:\n"
	"  - { label: one, params: { size: 1 },\n"
	"      reference: [ { metric: lat, value: 100, unit: ns, kind: calibration } ] }\n"
	"  - { label: two, params: { size: 2 },\n"
	"      reference: [ { metric: lat, value: 210, unit: ns, kind: prediction } ] }\n"
	"  - { label: four, params: { size: 4 },\n"
	"      reference: [ { metric: lat, value: 390, unit: ns, kind: prediction } ] }\n";

static int setup(void **state)
{
	static struct scenario_fixture f;

	if (scenario_fixture_up(&f, &fixed, scenario_text, "atomic-test.yaml"))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	scenario_fixture_down(*state);
	return 0;
}

static void make_tmpdir(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/ilab-atomic-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

/* The directory's entries, sorted, space-separated ("" when empty). */
static void list_dir(const char *dir, char *out, size_t len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t off = 0;

	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			off += (size_t)snprintf(out + off, len - off, "%s%s", off ? " " : "",
						names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

static void remove_dir(const char *dir)
{
	struct dirent *e;
	char path[512];
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

struct outcome {
	int ret;
	char msg[1024];
};

enum what { SAVE_JSON, PLOT };

/* Run what in a child whose files may not grow past limit bytes; its return and message. */
static void in_child(enum what what, const struct ilab_scenario_result *r, const char *dir,
		     rlim_t limit, struct outcome *o)
{
	int fds[2], st;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { limit, limit };
		struct outcome res = { 0 };
		char path[512];

		close(fds[0]);
		signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		snprintf(path, sizeof(path), "%s/%s.json", dir, r->scenario->name);
		res.ret = what == SAVE_JSON ? ilab_result_save_json(r, path, res.msg, sizeof(res.msg))
					    : ilab_report_plot(r, dir, res.msg, sizeof(res.msg));
		if (write(fds[1], &res, sizeof(res)) != sizeof(res))
			_exit(4);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], o, sizeof(*o)), sizeof(*o));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_json_is_written_whole_with_the_usual_mode(void **state)
{
	struct scenario_fixture *f = *state;
	char dir[64], path[128], list[512], msg[512];
	struct stat st;
	mode_t mask = umask(022);

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/atomic-test.json", dir);
	assert_int_equal(ilab_result_save_json(f->r, path, msg, sizeof(msg)), 0);
	list_dir(dir, list, sizeof(list));
	assert_string_equal(list, "atomic-test.json");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* not mkstemp's 0600 */
	assert_true(st.st_size > 512);             /* so that the next test's limit cuts it */
	umask(mask);
	remove_dir(dir);
}

/* A write that fails half-way: an error naming the file and EFBIG, the old file untouched. */
static void test_json_write_failure_keeps_the_old_file_and_no_temporary(void **state)
{
	struct scenario_fixture *f = *state;
	char dir[64], path[128], list[512];
	struct outcome o;

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/atomic-test.json", dir);
	write_text(path, "previous run\n");
	in_child(SAVE_JSON, f->r, dir, 512, &o);
	assert_int_equal(o.ret, -EFBIG);
	assert_non_null(strstr(o.msg, path));
	assert_non_null(strstr(o.msg, strerror(EFBIG)));
	list_dir(dir, list, sizeof(list));
	assert_string_equal(list, "atomic-test.json");
	expect_text(path, "previous run\n");

	/* and without an old file: nothing at all */
	unlink(path);
	in_child(SAVE_JSON, f->r, dir, 512, &o);
	assert_int_equal(o.ret, -EFBIG);
	list_dir(dir, list, sizeof(list));
	assert_string_equal(list, "");
	remove_dir(dir);
}

static void test_plot_script_write_failure_leaves_nothing(void **state)
{
	struct scenario_fixture *f = *state;
	char dir[64], path[128], list[512];
	struct outcome o;

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/atomic-test.gp", dir);
	write_text(path, "# previous run\n");
	in_child(PLOT, f->r, dir, 256, &o);
	assert_int_equal(o.ret, -EFBIG);
	assert_non_null(strstr(o.msg, path));
	list_dir(dir, list, sizeof(list));
	assert_string_equal(list, "atomic-test.gp");
	expect_text(path, "# previous run\n");
	remove_dir(dir);
}

/* Plot into dir; without gnuplot, remove dir and skip the test (a failure under CI). */
static void plot_or_skip(const struct scenario_fixture *f, const char *dir)
{
	char msg[512];
	int ret = ilab_report_plot(f->r, dir, msg, sizeof(msg));

	if (ret == 1 && strstr(msg, "gnuplot not found")) {
		remove_dir(dir);
		ILAB_SKIP("no gnuplot on this host: PNG writing not checked");
	}
	if (ret != 0)
		fail_msg("plot: %d %s", ret, msg);
}

/* gnuplot itself cannot write the whole PNG: no truncated PNG, no temporary, and the earlier
 * PNG left as it was (the one output rule: the error names the file; nothing is deleted). */
static void test_png_write_failure_keeps_the_old_png(void **state)
{
	struct scenario_fixture *f = *state;
	char dir[64], list[512], png[128];
	struct stat before, after;
	struct outcome o;

	make_tmpdir(dir, sizeof(dir));
	plot_or_skip(f, dir);
	list_dir(dir, list, sizeof(list));
	assert_string_equal(list, "atomic-test.gp atomic-test.png atomic-test.svg");
	snprintf(png, sizeof(png), "%s/atomic-test.png", dir);
	assert_int_equal(stat(png, &before), 0);
	/* the script fits in 8 KiB, the picture does not */
	in_child(PLOT, f->r, dir, 8192, &o);
	assert_true(o.ret < 0);
	assert_non_null(strstr(o.msg, "gnuplot"));
	list_dir(dir, list, sizeof(list));
	assert_string_equal(list, "atomic-test.gp atomic-test.png atomic-test.svg");
	/* the same file (not renamed over), whole */
	assert_int_equal(stat(png, &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(after.st_size, before.st_size);
	remove_dir(dir);
}

/* The script renders on its own to the name it states (the temporary name is only iommulab's). */
static void test_script_alone_renders_its_png(void **state)
{
	struct scenario_fixture *f = *state;
	char dir[64], list[512], cmd[256];

	make_tmpdir(dir, sizeof(dir));
	plot_or_skip(f, dir);
	snprintf(cmd, sizeof(cmd), "%s/atomic-test.png", dir);
	assert_int_equal(unlink(cmd), 0);
	snprintf(cmd, sizeof(cmd), "gnuplot %s/atomic-test.gp 2>/dev/null", dir);
	assert_int_equal(system(cmd), 0);
	list_dir(dir, list, sizeof(list));
	assert_string_equal(list, "atomic-test.gp atomic-test.png atomic-test.svg");
	remove_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_is_written_whole_with_the_usual_mode),
		cmocka_unit_test(test_json_write_failure_keeps_the_old_file_and_no_temporary),
		cmocka_unit_test(test_plot_script_write_failure_leaves_nothing),
		cmocka_unit_test(test_png_write_failure_keeps_the_old_png),
		cmocka_unit_test(test_script_alone_renders_its_png),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/* topo_isolate.c — run a topology load in a child process first, so that a crash or a hang
 * inside libhwloc on a file nobody checked for becomes an error message instead of taking the
 * caller down. The checks in topo_xml_check.c catch the crashes we know; this catches the rest.
 * hwloc's load is deterministic: when the child finishes, the same load in-process does too.
 */
#include "topo/topo_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child dies of these as the kernel would kill it: no core file, no handler of the parent's
 * (a sanitizer's or libFuzzer's would report the crash as its own and keep going). */
static void child_defaults(unsigned timeout_s)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM };
	struct rlimit no_core = { 0, 0 };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t unblock;
	int null_fd;

	setrlimit(RLIMIT_CORE, &no_core);
	sigemptyset(&unblock);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &dfl, NULL);
		sigaddset(&unblock, sigs[i]);
	}
	sigprocmask(SIG_UNBLOCK, &unblock, NULL);
	/* hwloc's complaints come again from the load in-process; say them once */
	null_fd = open("/dev/null", O_WRONLY);
	if (null_fd >= 0) {
		dup2(null_fd, STDOUT_FILENO);
		dup2(null_fd, STDERR_FILENO);
	}
	alarm(timeout_s);
}

void (*topo_isolate_test_hook)(void);

int topo_run_isolated(const char *name, const char *fix, void (*fn)(void *), void *arg,
		      unsigned timeout_s, char *err, size_t errlen)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return topo_fail(err, errlen, errno,
				 "%s: cannot start the process that checks it (fork: %s)", name,
				 strerror(errno));
	if (pid == 0) {
		child_defaults(timeout_s);
		if (topo_isolate_test_hook)
			topo_isolate_test_hook();
		fn(arg);
		_exit(0); /* no atexit handlers, no leak check: the parent's state is not ours */
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return topo_fail(err, errlen, errno, "%s: lost the process that checks it (%s)",
					 name, strerror(errno));
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return topo_fail(err, errlen, ETIMEDOUT, "%s: hwloc took more than %u s to read it",
				 name, timeout_s);
	if (WIFSIGNALED(status))
		return topo_fail(err, errlen, EINVAL, "%s: hwloc crashed reading it (%s); %s", name,
				 strsignal(WTERMSIG(status)), fix);
	/* a runtime of the parent's (a sanitizer) caught the fault and exited */
	return topo_fail(err, errlen, EINVAL, "%s: hwloc failed reading it (exit status %d); %s",
			 name, WEXITSTATUS(status), fix);
}

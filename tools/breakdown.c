/* breakdown.c — `iommulab bench --breakdown`: the simulator's breakdown (ilab_sim_json's
 * "breakdown" and "lines") as tables, the way `perf report --children` shows a call graph.
 * It only formats: what the numbers mean is docs/breakdown.md.
 */
#include "cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define HOT_LINES 8

static uint64_t u64(const json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

struct entry {
	const char *name;
	const json_t *node;
	uint64_t key;
};

/* Largest first, then by name: the order of a profiler's report, and deterministic. */
static int by_key(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The object's members as entries sorted by key_name's value, largest first. */
static struct entry *sorted(const json_t *obj, const char *key_name, size_t *n)
{
	struct entry *e = calloc(json_object_size(obj) + 1, sizeof(*e));
	const char *k;
	json_t *v;

	*n = 0;
	if (!e)
		return NULL;
	json_object_foreach((json_t *)obj, k, v) {
		e[*n] = (struct entry){ k, v, u64(v, key_name) };
		(*n)++;
	}
	qsort(e, *n, sizeof(*e), by_key);
	return e;
}

static void print_tree(FILE *f, const json_t *fns, unsigned depth, uint64_t cpu_ns)
{
	size_t n;
	struct entry *e = sorted(fns, "total_ns", &n);

	for (size_t i = 0; e && i < n; i++) {
		uint64_t self = u64(e[i].node, "self_ns");

		fprintf(f, "%*s%-*s %12llu %12llu %10llu %6.1f%%\n", (int)depth * 2, "",
			32 - (int)depth * 2, e[i].name, (unsigned long long)self,
			(unsigned long long)u64(e[i].node, "total_ns"),
			(unsigned long long)u64(e[i].node, "calls"),
			cpu_ns ? 100.0 * (double)self / (double)cpu_ns : 0.0);
		print_tree(f, json_object_get(e[i].node, "children"), depth + 1, cpu_ns);
	}
	free(e);
}

static void print_lines(FILE *f, const json_t *lines, uint64_t elapsed)
{
	size_t n;
	struct entry *e;
	const char *k;
	json_t *v;

	/* hottest = most time spent on the line: transfers plus waiting for it */
	json_object_foreach((json_t *)lines, k, v)
		json_object_set_new(v, "_cost", json_integer((json_int_t)(u64(v, "transfer_ns") +
									 u64(v, "wait_ns"))));
	e = sorted(lines, "_cost", &n);
	fprintf(f, "hottest cache lines (by transfer + wait time; mean waiting = wait ns / %llu "
		"simulated ns):\n", (unsigned long long)elapsed);
	fprintf(f, "%-32s %10s %12s %10s %12s %12s %12s\n", "line", "transfers", "transfer ns",
		"CAS fails", "wait ns", "max wait ns", "mean waiting");
	for (size_t i = 0; e && i < n && i < HOT_LINES; i++) {
		const json_t *l = e[i].node;

		if (!e[i].key)
			break;
		fprintf(f, "%-32s %10llu %12llu %10llu %12llu %12llu %12.3f\n", e[i].name,
			(unsigned long long)u64(l, "transfers"),
			(unsigned long long)u64(l, "transfer_ns"),
			(unsigned long long)u64(l, "rmw_retries"),
			(unsigned long long)u64(l, "wait_ns"),
			(unsigned long long)u64(l, "max_wait_ns"),
			elapsed ? (double)u64(l, "wait_ns") / (double)elapsed : 0.0);
	}
	free(e);
	json_object_foreach((json_t *)lines, k, v)
		json_object_del(v, "_cost");
}

void cli_print_breakdown(FILE *f, json_t *sim)
{
	const json_t *b = json_object_get(sim, "breakdown");
	uint64_t cpu_ns = u64(b, "cpu_ns"), claims = u64(b, "claims");
	uint64_t attempts = u64(b, "claim_attempts");

	if (!b)
		return;
	fprintf(f, "breakdown: simulated CPU time of the benchmark threads, %llu ns "
		"(share = self / that)\n", (unsigned long long)cpu_ns);
	fprintf(f, "%-32s %12s %12s %10s %7s\n", "function", "self ns", "total ns", "calls",
		"share");
	print_tree(f, json_object_get(b, "functions"), 0, cpu_ns);
	if (u64(b, "unbalanced") || u64(b, "lost"))
		fprintf(f, "(unbalanced scopes %llu, scopes past the depth limit %llu)\n",
			(unsigned long long)u64(b, "unbalanced"),
			(unsigned long long)u64(b, "lost"));
	if (claims)
		fprintf(f, "attempts per command-queue claim: %.3f (%llu cmpxchg in %llu claims)\n",
			(double)attempts / (double)claims, (unsigned long long)attempts,
			(unsigned long long)claims);
	else
		fprintf(f, "attempts per command-queue claim: none (no shared-queue claim)\n");
	print_lines(f, json_object_get(sim, "lines"), u64(sim, "virtual_time_ns"));
}

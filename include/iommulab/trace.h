/* trace.h — the simulation as a timeline: a Chrome/Perfetto JSON trace-event file
 * (docs/trace.md) with one track per simulated CPU (the breakdown's scopes as nested B/E
 * slices), one per IOMMU unit (the commands it executed, as X slices) and counters. It is not
 * a statistic and changes no simulated figure: it only reads the running fiber's clock.
 *
 *   struct ilab_trace *t;
 *   ilab_trace_open("out.json", 0, ILAB_TRACE_MAX_BYTES, &t, err, sizeof(err));
 *   ilab_trace_use(t, "bench");         simulators created from now on write to t
 *   ... ilab_testbed_up / run / down ...
 *   ilab_trace_use(NULL, NULL);
 *   ilab_trace_close(t, err, sizeof(err));
 *
 * Events are written as they happen through a buffered stream, so a long run holds none of
 * them in memory; limit_ns ends the window: nothing that starts more than that many ns of
 * virtual time after a simulator first started CPU threads is written (slices open at that
 * point are still closed; the set-up before the threads is written whole).
 */
#ifndef IOMMULAB_TRACE_H
#define IOMMULAB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ilab_trace;

/* The default bound on a trace file's size: Catapult and Perfetto's JSON importer read the
 * whole file as one JavaScript string, and V8's longest string is 512 MiB. */
#define ILAB_TRACE_MAX_BYTES (256ull << 20)

/* Start the file (a temporary next to path) and write its head. limit_ns: the window (0 = the
 * whole run). max_bytes: once the file is about that long (it may pass it by a few thousand
 * events), no event starts any more and the run goes on (0 = no bound); an instant event
 * "trace limit reached" marks where. Returns 0, or a negative errno with "path: reason" in err. */
int ilab_trace_open(const char *path, uint64_t limit_ns, uint64_t max_bytes,
		    struct ilab_trace **out, char *err, size_t errlen);
/* Did the file reach max_bytes? Then what holds "<process>, at <t> us of simulated time". */
bool ilab_trace_stopped(const struct ilab_trace *t, char *what, size_t len);
/* Write the tail, close and rename the file to path: written whole or not at all. Returns 0,
 * or a negative errno with "path: reason" in err when any write failed (a full disk); then
 * an earlier file at path is left as it was. NULL is fine. */
int ilab_trace_close(struct ilab_trace *t, char *err, size_t errlen);
/* Simulators created from now on write to t, each as one process named label (copied; a
 * label used twice gets " (2)", " (3)" ...). NULL t: simulators created later are not traced.
 * A simulator keeps the trace it was created with until it is destroyed. */
void ilab_trace_use(struct ilab_trace *t, const char *label);

/* The run is over and its statistics are being taken: s's process ends here with an instant
 * event "statistics", and what s does later (the tear-down) is not written, so that the
 * trace and the statistics describe the same run. ilab_testbed_stats_json calls it. NULL or
 * an untraced simulator: nothing. */
struct ilab_sim;
void ilab_sim_trace_end(struct ilab_sim *s);

/* ---- for models that run in the active simulator (the board) -------------------------------- */

/* Is the active simulator writing a trace? */
bool ilab_sim_tracing(void);
/* A named track (a "thread" of the active simulator's process) for a model's events; the same
 * name gives the same track. Returns its id, or -1 when not tracing. */
int ilab_sim_trace_track(const char *name);
/* A complete slice on track: from start_ns for dur_ns of virtual time, with one integer
 * argument (arg_key NULL: none). name must stay valid until the call returns. */
void ilab_sim_trace_slice(int track, const char *name, uint64_t start_ns, uint64_t dur_ns,
			  const char *arg_key, int64_t arg);
/* A flow (an arrow in the viewers) starts at start_ns from the slice on track that begins
 * there: the device's work that will release a CPU's wait. Kernel-side code ends it with
 * plat_trace_flow_in(key) (iommulab/plat.h) inside its wait's slice. A key started again
 * before its end replaces the first; a flow never ended is drawn as a start alone. name must
 * live as long as the simulator (a string literal). */
void ilab_sim_trace_flow_out(int track, const char *name, uint64_t key, uint64_t start_ns);
/* A device's piece of work that may overlap others of its kind (a DMA transfer, a translation
 * request, a page walk): an async slice (b/e events, category "device") from start_ns for
 * dur_ns, shown by the viewers in rows under name, which says whose it is ("dmar0 walk"). */
void ilab_sim_trace_async(const char *name, uint64_t start_ns, uint64_t dur_ns,
			  const char *arg_key, int64_t arg);
/* A counter's new value at the running fiber's virtual time: counter track name of the active
 * simulator's process, series key (the viewers show "name key"). */
void ilab_sim_trace_counter(const char *name, const char *key, int64_t value);

#ifdef __cplusplus
}
#endif
#endif /* IOMMULAB_TRACE_H */

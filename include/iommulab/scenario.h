/* scenario.h — experiments: the scenario model (a YAML file naming a profile, the mechanisms
 * switched on per case, a workload and the published figures to compare with), its strict
 * parser, the workload registry and the runner that produces a struct ilab_scenario_result.
 * It is not the report (tables, JSON, plots: report.h) and not the workloads' measurement code
 * (src/workloads/); docs/experiments.md describes the file format.
 *
 * Typical use:
 *   struct ilab_scenario *s;
 *   if (ilab_scenario_load("scenarios/seed000-cmdsync.yaml", &s, err, sizeof(err)) < 0)
 *           fprintf(stderr, "%s\n", err);          ("file:line:column: message")
 *   struct ilab_scenario_result *r;
 *   ilab_scenario_run(s, &(struct ilab_run_options){ .quick = true }, &r, err, sizeof(err));
 *   ilab_report_table(r, stdout);                  (report.h)
 *   ilab_scenario_result_free(r); ilab_scenario_free(s);
 */
#ifndef IOMMULAB_SCENARIO_H
#define IOMMULAB_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <iommulab/kernel_era.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ILAB_SCN_NAME_MAX 64     /* scenario name, case label, profile, workload type */
#define ILAB_SCN_KEY_MAX 32      /* parameter and metric names */
#define ILAB_SCN_UNIT_MAX 16
#define ILAB_SCN_TEXT_MAX 1024   /* title, description, notes */
#define ILAB_SCN_PATH_MAX 512
#define ILAB_SCN_MAX_PARAMS 16   /* parameters of one workload */
#define ILAB_SCN_MAX_REFS 8      /* reference figures of one case */
#define ILAB_SCN_MAX_CASES 256
#define ILAB_SCN_MAX_FIGURES 8   /* figures one case's run may report */
#define ILAB_SCN_MAX_EFFECTS 256

/* The acceptance bounds (issue 7): calibration points within ±10%, predictions ±25%. */
#define ILAB_TOL_CALIBRATION 0.10
#define ILAB_TOL_PREDICTION 0.25

/* ---- the model ------------------------------------------------------------------------------ */

enum ilab_engine_kind { ILAB_ENGINE_KIND_SIM = 0, ILAB_ENGINE_KIND_NATIVE };
enum ilab_cma_policy { ILAB_CMA_POLICY_GLOBAL = 0, ILAB_CMA_POLICY_PERNUMA }; /* seed 000 */
enum ilab_domain_lookup { ILAB_LOOKUP_REFCOUNT = 0, ILAB_LOOKUP_DIRECT }; /* seed 001 */
enum ilab_dma_mode { ILAB_MODE_STRICT = 0, ILAB_MODE_LAZY, ILAB_MODE_PASSTHROUGH };
/* Seed 004 on VT-d: where the Intel driver puts a domain's nid (intel_iommu_drv.h
 * enum ilab_intel_nid_policy, same order): Linux 6.3, the seed's patch, iommulab's hint. */
enum ilab_intel_nid { ILAB_INTEL_NID_MECH_MAINLINE = 0, ILAB_INTEL_NID_MECH_UNIT_ON_ATTACH,
		      ILAB_INTEL_NID_MECH_HINT };

/* dma-iommu's flush queue (dma_iommu.h enum ilab_dma_fq_kind, same order) and IOVA depot
 * (iova.h enum ilab_iova_depot_mode, same order); issue 21. */
enum ilab_fq_mech { ILAB_FQ_MECH_PERCPU = 0, ILAB_FQ_MECH_SINGLE };
enum ilab_depot_mech { ILAB_DEPOT_MECH_LIST = 0, ILAB_DEPOT_MECH_FIXED32 };

/* The switches a case turns on. The zero value is Linux before any of the seed patches:
 * one global CMA area, refcounted domain lookup, per-page map/unmap, one command queue, strict
 * invalidation, one VFIO domain for every group. */
struct ilab_mechanisms {
	enum ilab_cma_policy cma;
	enum ilab_domain_lookup lookup;
	bool map_pages;                 /* seed 002 */
	bool map_pages_set;             /* the file says map_pages (else the kernel era decides) */
	bool lookup_set;                /* the file says lookup (else the kernel era decides) */
	bool ecmdq;                     /* seed 003 */
	bool cmdqv;                     /* the machine's Tegra241 CMDQV used (off: Linux's
					 * disable_cmdqv; the profile must have one for on) */
	enum ilab_dma_mode mode;
	bool vfio_attach_group_by_node; /* seed 004 */
	enum ilab_intel_nid intel_iommu_nid; /* seed 004 on VT-d machines only */
	enum ilab_fq_mech fq;           /* lazy mode's flush queue: per-CPU (default) or single */
	enum ilab_depot_mech iova_depot; /* default list (Linux >= 6.7) */
	bool cmdq_fair_lock;            /* SMMUv3 cmdq lock since Linux's 2026 fairness change */
	bool iova_depot_set, cmdq_lock_set; /* the file says them (else the kernel era decides) */
};

struct ilab_param {
	char name[ILAB_SCN_KEY_MAX];
	double value; /* integral when the workload declares the parameter an integer */
	unsigned line, column; /* where the file set it (1-based); 0: the workload's default */
};

/* Whether a published figure set the profile's constants or is predicted from them. Who
 * calibrates decides; until then a figure is "undecided" and judged with the prediction bound. */
enum ilab_ref_kind { ILAB_REF_UNDECIDED = 0, ILAB_REF_CALIBRATION, ILAB_REF_PREDICTION };
/* "> 550 ns" in a post is a lower bound: relation gt. */
enum ilab_ref_relation { ILAB_REL_EQ = 0, ILAB_REL_GT, ILAB_REL_LT };

struct ilab_reference {
	char metric[ILAB_SCN_KEY_MAX];
	char unit[ILAB_SCN_UNIT_MAX];
	double value; /* > 0 */
	enum ilab_ref_kind kind;
	enum ilab_ref_relation relation;
	/* The published tool's resolution: dma_map_benchmark prints 100 ns units, truncated, so
	 * "0.1" means 0.1-0.199 µs; our figure is truncated the same way before comparing. 0: none. */
	double truncate;
	double tolerance; /* fraction; 0 = by kind (undecided: the prediction bound) */
	char note[ILAB_SCN_TEXT_MAX / 4];
};

struct ilab_case {
	char label[ILAB_SCN_NAME_MAX];
	char series[ILAB_SCN_NAME_MAX]; /* plot line this case belongs to ("" = one per label) */
	struct ilab_mechanisms mech;
	/* Effective parameters: workload defaults, then the scenario's, then the case's. */
	unsigned nr_params;
	struct ilab_param params[ILAB_SCN_MAX_PARAMS];
	unsigned nr_refs;
	struct ilab_reference refs[ILAB_SCN_MAX_REFS];
	unsigned line; /* 1-based line of the case in its file */
	/* The kernel it runs on: the case's kernel:, else the scenario's; has_kernel false when
	 * neither says (then today's stack with the mechanisms as written, kernel = latest). */
	bool has_kernel;
	struct ilab_kernel_era kernel;
};

/* A published effect: how one metric changes from case `from` (without the mechanism, or
 * the baseline) to case `to` (with it), both cases having a published figure for it. The
 * report computes the seed's change and iommulab's and says whether they agree in direction
 * ("every seed's effect has the right direction"). */
struct ilab_effect {
	char label[ILAB_SCN_NAME_MAX];
	char metric[ILAB_SCN_KEY_MAX];
	unsigned from, to;         /* case indices */
	unsigned from_ref, to_ref; /* index of the metric's figure in each case's refs */
	unsigned line;             /* 1-based line of the effect in its file */
};

struct ilab_workload;

struct ilab_scenario {
	char path[ILAB_SCN_PATH_MAX]; /* the file it came from */
	char name[ILAB_SCN_NAME_MAX];
	char seed[8];                 /* "000".."999" */
	char title[ILAB_SCN_TEXT_MAX / 4];
	char description[ILAB_SCN_TEXT_MAX];
	char source[ILAB_SCN_PATH_MAX]; /* the seed post it reproduces */
	char profile[ILAB_SCN_PATH_MAX]; /* a name, or a file (`iommulab run --profile FILE`) */
	unsigned profile_line, profile_column; /* where profile: is (1-based), for messages */
	enum ilab_engine_kind engine;
	double tol_calibration, tol_prediction;
	const struct ilab_workload *workload;
	/* --quick overrides of parameters (reduced sizes for tests). */
	unsigned nr_quick;
	struct ilab_param quick[ILAB_SCN_MAX_PARAMS];
	/* plot hints: x names a parameter (else cases are categories on the x axis). */
	char plot_x[ILAB_SCN_KEY_MAX];
	char plot_xlabel[ILAB_SCN_NAME_MAX];
	bool plot_logx, plot_logy;
	/* plot.y: the metric drawn for cases without reference figures (predictions nobody has
	 * measured): iommulab's values alone, no published points. "" = such cases not drawn. */
	char plot_y[ILAB_SCN_KEY_MAX];
	unsigned nr_cases;
	struct ilab_case *cases;
	unsigned nr_effects;
	struct ilab_effect *effects; /* optional: the published effects to check */
	/* Not from the file: the simulator's seed for one run, set by ilab_scenario_run on the
	 * copy it hands the workload (0 = 1); read it with ilab_scenario_seed(). */
	uint64_t sim_seed;
};

static inline uint64_t ilab_scenario_seed(const struct ilab_scenario *s)
{
	return s->sim_seed ? s->sim_seed : 1;
}

/* Parse a scenario file. Returns 0 and *out (free with ilab_scenario_free), or a negative errno:
 * -EINVAL with err = "file:line:column: message" for bad content (syntax error, unknown key,
 * wrong type, missing field, value out of range, unknown workload or metric, a machine profile
 * that cannot be found), -ENOENT etc. with err = "file: strerror" when it cannot be read. */
int ilab_scenario_load(const char *path, struct ilab_scenario **out, char *err, size_t errlen);
/* The same from memory, except that it reads no files: the machine profile is not looked up
 * and node numbers are not checked against its machine (load does both after parsing); name
 * stands for the file name in messages. */
int ilab_scenario_parse(const char *text, size_t len, const char *name,
			struct ilab_scenario **out, char *err, size_t errlen);
void ilab_scenario_free(struct ilab_scenario *s);

/* Set mechanism name ("mode", "fq" ...) from its scenario-file text ("lazy"; on|off for the
 * switches). 0, or -EINVAL with msg: "unknown mechanism ..." for a name, else the value's
 * fault ("'x' is not one of a|b"). */
int ilab_mechanism_set(struct ilab_mechanisms *m, const char *name, const char *value,
		       char *msg, size_t msglen);

/* A case's parameter, or dflt when it has none. */
double ilab_case_param(const struct ilab_case *c, const char *name, double dflt);
/* Whether the file sets the parameter (scenario or case), not only the workload's default. */
bool ilab_case_param_set(const struct ilab_case *c, const char *name);
/* Whether the case uses map_pages: as the mechanisms say when they say it, else as its kernel
 * did (c->kernel, when the file names one), else off (the mechanisms' default). */
bool ilab_case_map_pages(const struct ilab_case *c);
/* The same for the IOVA depot and the command-queue lock (kernel_era.h). */
enum ilab_depot_mech ilab_case_iova_depot(const struct ilab_case *c);
bool ilab_case_cmdq_fair_lock(const struct ilab_case *c);
/* The domain lookup the same way: the file's, else its kernel's (refcount up to 4.18), else the
 * mechanisms' default (refcount). */
enum ilab_domain_lookup ilab_case_lookup(const struct ilab_case *c);

const char *ilab_engine_kind_name(enum ilab_engine_kind e); /* "sim", "native" */
const char *ilab_cma_policy_name(enum ilab_cma_policy p);   /* "global", "pernuma" */
const char *ilab_domain_lookup_name(enum ilab_domain_lookup l); /* "refcount", "direct" */
const char *ilab_dma_mode_name(enum ilab_dma_mode m);       /* "strict", "lazy", "passthrough" */
const char *ilab_intel_nid_name(enum ilab_intel_nid n);  /* "mainline", "unit_on_attach", "hint" */
const char *ilab_fq_mech_name(enum ilab_fq_mech f);        /* "percpu", "single" */
const char *ilab_depot_mech_name(enum ilab_depot_mech d);  /* "list", "fixed32" */
const char *ilab_ref_kind_name(enum ilab_ref_kind k);       /* "undecided", "calibration", ... */
const char *ilab_ref_relation_name(enum ilab_ref_relation r); /* "eq", "gt", "lt" */

/* ---- results ------------------------------------------------------------------------------- */

enum ilab_case_status {
	ILAB_CASE_OK = 0,
	ILAB_CASE_NOT_IMPLEMENTED, /* the workload's run returned -ENOSYS */
	ILAB_CASE_FAILED,          /* any other error */
};

struct ilab_figure {
	char metric[ILAB_SCN_KEY_MAX];
	char unit[ILAB_SCN_UNIT_MAX];
	double value;
};

/* What one case's run produced. A workload fills figures (and may fill stats_json); the runner
 * fills status and message. */
struct ilab_case_result {
	enum ilab_case_status status;
	char message[256];
	unsigned nr_figures;
	struct ilab_figure figures[ILAB_SCN_MAX_FIGURES];
	/* Optional: a JSON object (text, malloc'd) of engine statistics, embedded as "stats". */
	char *stats_json;
	double host_seconds; /* wall time of the run; for progress lines only (not in the JSON) */
	/* Lazy mode on an SMMUv3 of a kernel before 4.20 (the non-strict series, 4.20, applied
	 * as a backport: seed 001's lazy case); said in the table and the JSON. */
	bool backport_non_strict;
	/* With --repeat (nr_runs >= 2): runs[k * ILAB_SCN_MAX_FIGURES + i] is figure i of the run
	 * with seed (result's seed + k), malloc'd; figures[i].value is then their mean and
	 * stats_json the first run's. nr_runs 0 or 1: no spread, runs NULL. */
	unsigned nr_runs;
	double *runs;
};

/* Record a figure; returns -ENOSPC when the case already has ILAB_SCN_MAX_FIGURES. */
int ilab_case_result_add(struct ilab_case_result *r, const char *metric, const char *unit,
			 double value);
/* The figure for metric, or NULL. */
const struct ilab_figure *ilab_case_result_find(const struct ilab_case_result *r,
						const char *metric);

struct ilab_scenario_result {
	const struct ilab_scenario *scenario; /* not owned */
	bool quick;
	unsigned nr_cases;               /* = scenario->nr_cases */
	struct ilab_case_result *cases;  /* one per scenario case, same order */
	uint64_t seed;                   /* the first run's simulator seed (1 by default) */
	unsigned repeat;                 /* runs per case, seeds seed .. seed + repeat - 1 */
	/* The profile the cases ran on when it is not the scenario's (--profile), else "". */
	char profile[ILAB_SCN_PATH_MAX];
};

/* ---- workloads ------------------------------------------------------------------------------ */

struct ilab_workload_param {
	const char *name;
	double dflt;
	double min, max; /* inclusive */
	bool integer;
	const char *doc;
	/* a NUMA node number: ilab_scenario_load checks it against the profile's machine */
	bool node;
};

struct ilab_workload_metric {
	const char *name;
	const char *unit;
	const char *doc;
};

/* A workload: what a scenario's "workload.type" names. run() measures one case (with --quick
 * overrides already applied) and adds its figures with ilab_case_result_add(); it returns 0,
 * -ENOSYS when not implemented yet, or another negative errno with a message in err. */
struct ilab_topo;
struct ilab_profile;

struct ilab_workload {
	const char *name;
	int (*run)(const struct ilab_scenario *s, const struct ilab_case *c,
		   struct ilab_case_result *r, char *err, size_t errlen);
	const char *summary;
	const char *needs;                         /* what it waits for: "issues 4 and 6" */
	const struct ilab_workload_param *params;  /* terminated by { NULL } */
	const struct ilab_workload_metric *metrics; /* terminated by { NULL } */
	bool sim_only; /* measures simulated machines only: a scenario with engine: native is
			* refused when it is loaded (file:line:column), not case by case */
	/* Optional: can this case run on the machine at all (parameters against each other and
	 * against the topology)? Called by ilab_scenario_load for every case, as written and with
	 * the quick: overrides; 0, or non-zero with a one-line reason in msg. What it refuses is
	 * a scenario error (exit 2 from the CLI), found before anything runs. */
	int (*check)(const struct ilab_case *c, const struct ilab_topo *topo, char *msg,
		     size_t msglen);
	/* Optional: does the machine profile describe what the workload reads from it (the NIC
	 * workloads: the nic: section's receive stack)? Called once by ilab_scenario_load with the
	 * loaded profile; 0, or non-zero with a one-line reason in msg, reported at the scenario's
	 * profile: key (exit 2 from the CLI). */
	int (*check_profile)(const struct ilab_profile *prof, char *msg, size_t msglen);
};

/* The case as its workload sees it: *in, with the scenario's quick: overrides when quick. */
void ilab_case_effective(const struct ilab_scenario *s, const struct ilab_case *in, bool quick,
			 struct ilab_case *out);

const struct ilab_workload *ilab_workload_find(const char *name);
/* The i-th known workload (built-in first, then registered), NULL past the end. */
const struct ilab_workload *ilab_workload_at(size_t i);
/* Add a workload (tests, plug-ins). The pointer must stay valid. -EEXIST for a taken name,
 * -ENOSPC when the table is full, -EINVAL for a nameless or run-less workload. */
int ilab_workload_register(const struct ilab_workload *w);
const struct ilab_workload_param *ilab_workload_param_find(const struct ilab_workload *w,
							   const char *name);
const struct ilab_workload_metric *ilab_workload_metric_find(const struct ilab_workload *w,
							     const char *name);

/* ---- running ------------------------------------------------------------------------------- */

/* The most runs per case `--repeat` takes: a full `iommulab run` costs about 7 s of host time
 * per seed with the flat line model and 10 s with line contention (2 shared cores), so 100
 * seeds is 10-17 minutes; 1000 would be hours for a mean that no longer moves. */
#define ILAB_RUN_REPEAT_MAX 100

struct ilab_trace;
struct ilab_run_options {
	bool quick;      /* apply the scenario's quick: parameter overrides */
	FILE *progress;  /* a line per case ("[name 1/2] label: status"); NULL = silent */
	uint64_t seed;   /* the simulator's seed (0 = 1) */
	unsigned repeat; /* run each case with seeds seed .. seed + repeat - 1 (0 = 1) */
	/* Run on this profile (name or file) instead of the scenario's; NULL = the scenario's.
	 * The caller checks that it describes the same machine (cmd_run.c). */
	const char *profile;
	/* --trace: each case's simulator(s) write to it as a process named "<scenario> <case>
	 * seed N" (docs/trace.md); NULL = no trace */
	struct ilab_trace *trace;
};

/* Run every case of s. Returns 0 and *out (free with ilab_scenario_result_free) even when
 * cases fail or are not implemented (their status says so); a negative errno only when the
 * run could not happen at all: -EINVAL (no scenario, or no runnable workload) or -ENOMEM. */
int ilab_scenario_run(const struct ilab_scenario *s, const struct ilab_run_options *o,
		      struct ilab_scenario_result **out, char *err, size_t errlen);
void ilab_scenario_result_free(struct ilab_scenario_result *r);

/* ---- built-in scenarios -------------------------------------------------------------------- */

/* The directory of built-in scenarios: $IOMMULAB_DATADIR/scenarios when that variable is set,
 * else <source tree>/scenarios when it exists, else <install prefix>/share/iommulab/scenarios.
 * Returns 0, or -ENOENT (err says where it looked). */
int ilab_scenario_dir(char *buf, size_t len, char *err, size_t errlen);
/* The built-in scenario files (*.yaml of that directory), sorted by name. *paths is one
 * malloc'd block (free it); returns the count or a negative errno. */
int ilab_scenario_builtin_list(char ***paths, char *err, size_t errlen);
/* Resolve what a user typed: an existing file, a built-in scenario name ("seed000-cmdsync"),
 * or a seed id ("000", also "seed000"). Returns 0, or -ENOENT with err saying what is known. */
int ilab_scenario_resolve(const char *what, char *path, size_t len, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* IOMMULAB_SCENARIO_H */

/* iommulab.c — the command-line front end: global options and the command table.
 * Not the commands themselves: each lives in tools/cmd_<name>.c, except `help`, which is here.
 */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/atomic_file.h"

/* New commands (bench, ...) add a line here and a tools/cmd_<name>.c. */
static const struct cli_command commands[] = {
	{ "topo", cmd_topo, "topo [--topology X] [--json]",
	  "show the modelled machine: nodes, CPUs, distances, root ports, IOMMU units, devices",
	  "  -t, --topology X  kunpeng920 (default), a100-2node, icelake-2s-a100, grace,\n"
	  "                    host, an hwloc XML file, or synthetic:<hwloc synthetic\n"
	  "                    description>\n"
	  "  -j, --json        print JSON (sorted keys) instead of text\n"
	  "  -h, --help        show this help\n" },
	{ "run", cmd_run, "run [--out DIR] [--quick] [--json] [--seed N] [--repeat N] [--profile NAME|FILE] [--trace FILE [--trace-limit-us N] [--trace-limit-mb M]] [scenario...]",
	  "run the seed experiments (000-004) and compare with the reference figures",
	  "  scenario          a file, a built-in name (seed000-cmdsync), short name (cmdsync)\n"
	  "                    or seed id (000); default: all\n"
	  "  -o, --out DIR     results directory (default results)\n"
	  "  -q, --quick       reduced sizes\n"
	  "  -j, --json        print the result JSON\n"
	  "  --seed N          simulator seed (default 1)\n"
	  "  --repeat N        run seeds S..S+N-1 (1-100): means and their spread\n"
	  "  --profile P       another profile of the same machine\n"
	  "  -h, --help        show this help\n" },
	{ "bench", cmd_bench, "bench [-t N] [-s S] [-n node] [-b bits] [-d dir] [-x ns] [-g pages] [-m single|sg] [--mode strict|lazy|passthrough] [--map-pages on|off] [--lookup refcount|direct] [--cma global|pernuma] [--fq-timer agent|unmap] [--topology X] [--unit N|--device NAME] [--duration-ms MS] [--iterations N] [--engine native|sim] [--profile FILE|NAME] [--iommu smmuv3|vtd] [--seed N] [--ecmdq on|off] [--cmdqv on|off] [--fq percpu|single] [--fq-size N] [--fq-timeout-ms MS] [--iova-depot list|fixed32] [--cmdq-lock shared|fair] [--kernel X.Y|latest] [--json] [--breakdown] [--trace FILE [--trace-limit-us N] [--trace-limit-mb M]]", "run the dma_map_benchmark experiment on the modelled IOMMU (SMMUv3 or VT-d), natively or simulated", "  -t threads (1)  -s seconds (20)  -n node (-1)  -b dma_bits (32)  -d dir 0|1|2 (0)\n  -x dma_trans_ns (0)  -g granule pages (1)  -m single|sg (single)\n  --mode strict|lazy|passthrough (strict)  --map-pages on|off (on)\n  --lookup refcount|direct (the kernel's: refcount to 4.18)  --cma global|pernuma\n  (global)\n  --fq-timer agent|unmap (agent: lazy mode's 10 ms timer is a polling thread)\n  --fq percpu|single (lazy: per-CPU rings of 256 and 10 ms, or one shared ring of\n  32768 and 1 s)  --fq-size N (power of two)  --fq-timeout-ms MS (override)\n  --iova-depot list|fixed32 (list: >= 6.7, fixed32: <= 6.6; default: the kernel's)\n  --cmdq-lock shared|fair (SMMUv3 cmdq lock: before / since the 2026 fairness fix;\n  default: the kernel's)\n  --kernel X.Y|latest (latest: the Linux version whose queue, CMD_SYNC, domain\n  lookup, IOVA caches, SAC latch, cmdq lock, page-table rules and VT-d IH run,\n  4.14 .. 7.x; the switches above win, said as a backport; --mode lazy on an\n  SMMUv3 before 4.20 runs 4.20's non-strict mode as a backport;\n  docs/kernel-eras.md)\n  --topology X (kunpeng920)  --unit N (a device behind IOMMU unit N, smmuN or\n  dmarN; --smmu N too)  --device NAME (default: the NIC on node 2)\n  --duration-ms MS (instead of -s)  --iterations N (per thread, instead of a time)\n  --engine native|sim (native; sim: simulated CPUs, virtual time, -s is simulated s)\n  --profile FILE|NAME (sim: the topology's profile; native: with --iommu, its\n  topology)  --seed N (1 to 2^53; 1)\n  --iommu smmuv3|vtd (the profile's architecture must be it; alone it picks\n  kunpeng920 or icelake-2s-a100; native: every unit of the topology has it)\n  --ecmdq on|off (none: no ECMDQs; on|off: one per CPU, used by the driver or not)\n  --cmdqv on|off (sim: the profile's Tegra241 CMDQV used or not; default: used if\n  the machine has one, as Linux; on needs one, and no --ecmdq)\n  --breakdown (sim: where the simulated time went, by function, and the hottest\n  cache lines; docs/breakdown.md)  --json  -h, --help\n  --trace FILE (sim: write the simulation as a Chrome/Perfetto JSON trace;\n  docs/trace.md)  --trace-limit-us N (only its first N simulated us\n  after the CPU threads start)  --trace-limit-mb M (256; 0: no bound)\n" },
	{ "fio", cmd_fio, "fio [JOBFILE...] [--name=NAME --OPTION=VALUE...] [--output-format=normal|json|json+|terse] [--output=FILE] [--iommu-mode=strict|lazy|passthrough] [--profile=NAME|FILE] [--device=NAME] [--nr-queues=N] [--kernel=X.Y|latest] [--seed=N] [--trace=FILE [--trace-limit-us=N] [--trace-limit-mb=M]]",
	  "run fio's job files and command lines on the machine's NVMe in the simulator (docs/fio.md)",
	  "  JOBFILE            fio job file: [global] and job sections, include, ${VAR}\n"
	  "  --name=NAME        starts a job (fio); the options after it are the job's, the\n"
	  "                     ones before the first --name (or after --name=global) global\n"
	  "  --OPTION=VALUE     fio's job options docs/fio.md lists: numjobs, iodepth, bs, rw,\n"
	  "                     rwmixread, bsrange, bssplit, runtime, time_based, ramp_time,\n"
	  "                     size, offset, number_ios, ioengine, hipri, direct,\n"
	  "                     cpus_allowed, group_reporting, percentile_list, kb_base ...\n"
	  "  --output-format=F  normal, json, json+ or terse (fio 3.x's shapes; terse version 3) (normal)\n"
	  "  --output=FILE      write the output there, whole or not at all\n"
	  "  --iommu-mode=M     strict, lazy or passthrough (strict)\n"
	  "  --profile=P        machine profile with an NVMe and an nvme: section (kunpeng920)\n"
	  "  --device=NAME      the topology's NVMe of that name (its first)\n"
	  "  --nr-queues=N      I/O queues the controller grants, 1..65535: CPUs in groups\n"
	  "                     share a queue (one per CPU)\n"
	  "  --kernel=X.Y       the Linux release's DMA path and NVMe completion (4.14 .. 7.x,\n"
	  "                     latest; docs/kernel-eras.md) (today's)\n"
	  "  --seed=N           simulator seed, 1 to 2^53 (1)\n"
	  "  -h, --help         show this help\n" },
	{ "sweep", cmd_sweep, "sweep FILE.yaml [-j N] [--shard I/N] [-o OUT.json] [--no-plot] [--check]",
	  "run a grid of cases over scenario, mechanism and profile parameters (docs/sweep.md)",
	  "  (see 'iommulab sweep --help')\n" },
	{ "merge", cmd_merge, "merge OUT.json SHARD.json... [--no-plot]",
	  "merge the shard files of one sweep into its result file and plots",
	  "  OUT.json          the merged result; plots OUT-<axis>.png (and OUT-heatmap.png)\n"
	  "  SHARD.json        files of `iommulab sweep --shard I/N`: one sweep, every case once\n"
	  "  --no-plot         no plots\n"
	  "  -h, --help        show this help\n"
	  "Shards of another sweep, overlapping or missing cases: exit 2.\n" },
	{ "calibrate", cmd_calibrate, "calibrate PROFILE [SCENARIO...] [--free SECTION.KEY=MIN:MAX]... [--case LABEL]... [--quick] [--weights terms|experiments] [--seed N] [--starts N] [--max-evals N] [-j N] [--out DIR] [--cross-validate [--folds K] [--fold K|list | --merge DIR]] [--measurements FILE.yaml] [--no-plot] [-v] | calibrate --import dma_map_benchmark|fio|lat_mem_rd|core-to-core-latency FILE [--nodes CPU,MEMORY]",
	  "fit a profile's free constants jointly to the seeds' published figures (docs/calibration.md)",
	  "  PROFILE           a profile name (kunpeng920) or file; its free: section names the\n"
	  "                    constants fitted, with their bounds\n"
	  "  SCENARIO          the measurement set (default: the built-in seed scenarios of\n"
	  "                    this profile)\n"
	  "  --free K=MIN:MAX  one more free constant (smmu.sync_ns=10:2000); repeatable\n"
	  "  --case LABEL      only these cases of the set; repeatable\n"
	  "  -q, --quick       the scenarios' reduced sizes\n"
	  "  --seed N          the starting points' stream (default 1)\n"
	  "  --starts N        starting points: the priors, then N-1 drawn (default 3)\n"
	  "  --max-evals N     optimiser steps per start (default 40 per constant + 20)\n"
	  "  -j, --jobs N      cases of one evaluation run at once (default: the host's CPUs)\n"
	  "  -o, --out DIR     results directory (default results): DIR/<name>.calibrated.yaml,\n"
	  "                    calibrate-<name>.txt, .json, -correlator.png\n"
	  "  --cross-validate  leave each experiment out, and K folds over cases (--folds K, 5)\n"
	  "  --fold K|list     one fold of the cross-validation alone (a Slurm array task):\n"
	  "                    DIR/calibrate-<name>-fold-K.json; list: the folds\n"
	  "  --merge DIR       the fold files of DIR merged: the report of one run\n"
	  "  --measurements F  your machine's measurements (docs/calibration.md) in the set\n"
	  "  --import dma_map_benchmark|fio FILE  the tool's output (fio: its JSON) as\n"
	  "                    measurement entries on stdout\n"
	  "  --import lat_mem_rd FILE --nodes CPU,MEMORY  lmbench's memory latency, run\n"
	  "                    bound to those nodes, as parts: entries on stdout\n"
	  "  --import core-to-core-latency FILE  its --csv (one-way ns by core pair) as\n"
	  "                    parts: entries on stdout\n"
	  "  --no-plot         no correlator plot\n"
	  "  -v, --verbose     a line per evaluation on stderr\n"
	  "  -h, --help        show this help\n" },
	{ "netperf", cmd_netperf, "netperf [-H HOST] [-t TCP_STREAM|TCP_MAERTS|TCP_RR|TCP_CRR|UDP_STREAM|UDP_RR|OMNI] [-l SECONDS|-N] [-P 0|1] [-T LCPU[,RCPU]] [-c] [-C] [-j] [-i MAX[,MIN]] [-I LEVEL[,WIDTH]] [--iommu-mode=strict|lazy|passthrough] [--queues=N] [--channels=N] [--irq-shift=K] [--profile=NAME|FILE] [--seed=N] [--json] [--trace FILE [--trace-limit-us N] [--trace-limit-mb M]] [-- -m SIZE | -r REQ,RSP] [-s SIZE] [-S SIZE] [-D] [-M SIZE] [-o|-O|-k [LIST]] [-d send|recv|rr] [-T tcp|udp]",
	  "run netperf's TCP and UDP tests on the machine's NIC in the simulator (docs/netperf.md)",
	  "  -t TEST            TCP_STREAM, UDP_STREAM (this host sends), TCP_MAERTS (it\n"
	  "                     receives), TCP_RR, UDP_RR, TCP_CRR (request/response) (TCP_STREAM)\n"
	  "  -H HOST            the simulated peer's name, in the banner (localhost)\n"
	  "  -l SECONDS|-N      simulated time measured, from 0.0001 (0.02), after 200 us;\n"
	  "                     -N: N transactions per stream (request/response tests)\n"
	  "  -P 0|1             0: netperf's data lines only, no banner or headers (1)\n"
	  "  -c, -C             local and remote CPU utilisation and service demand\n"
	  "  -i MAX[,MIN], -I LEVEL[,WIDTH]  confidence intervals from seeded repeats\n"
	  "  --iommu-mode=M     strict, lazy or passthrough (strict)\n"
	  "  --queues=N         streams, one NIC queue pair and CPU each (1; at most 256)\n"
	  "  --channels=N       the NIC's channels (the profile's nic.queues)\n"
	  "  --irq-shift=K      each channel's interrupt K CPUs on (0)\n"
	  "  --profile=P        machine profile with a NIC and the nic: netperf keys (kunpeng920)\n"
	  "  --seed=N           simulator seed, 1 to 2^53 (1)\n"
	  "  --json             print JSON, with the simulator's statistics\n"
	  "  -h, --help         show this help\n"
	  "  test options, after --:\n"
	  "  -m SIZE            stream tests: bytes per send: 64, 16K, 64K (16K; UDP 65507)\n"
	  "  -r REQ[,RSP]       request/response bytes, at most 65160, UDP_RR 1472 (1,1)\n"
	  "  -s, -S SIZE        socket buffers, printed as Linux's getsockopt gives them\n"
	  "  -D                 no delay (the model sends each write at once anyway)\n"
	  "  -M SIZE            the peer's receive size (no effect: not modelled)\n"
	  "  -o, -O, -k [LIST]  omni output: CSV, human or NAME=value of LIST (THROUGHPUT,\n"
	  "                     MEAN_LATENCY,P99_LATENCY...; docs/netperf.md)\n"
	  "  -d DIR, -T PROTO   OMNI: send, recv or rr; tcp or udp\n" },
	{ "iperf3", cmd_iperf3, "iperf3 -c HOST [-p PORT] [-t SECONDS] [-P N] [-l LEN] [-R | -u [-b RATE]] [-i SECONDS] [-O SECONDS] [-J] [--iommu-mode=strict|lazy|passthrough] [--profile=NAME|FILE] [--seed=N] [--trace FILE [--trace-limit-us N] [--trace-limit-mb M]]",
	  "run iperf3's TCP or UDP client on the machine's NIC in the simulator (docs/iperf3.md)",
	  "  -c HOST            the simulated server's name (nothing is sent)\n"
	  "  -p PORT            its port, in the output (5201)\n"
	  "  -t SECONDS         simulated time (10)\n"
	  "  -P N               parallel streams, one NIC queue pair and CPU each (1; at most 128)\n"
	  "  -l LEN             bytes per write: 64, 16K, 128K, up to 1M (128K)\n"
	  "  -R                 reverse: the server sends, this host receives\n"
	  "  -u                 UDP datagrams of -l bytes (1448), paced to -b\n"
	  "  -b RATE            with -u: bits/s per stream, K/M/G by 1000 (1M; 0: no limit)\n"
	  "  -i SECONDS         interval reports (1; 0: none)\n"
	  "  -O SECONDS         omit the first seconds (0)\n"
	  "  -J                 iperf3's JSON\n"
	  "  --iommu-mode=M     strict, lazy or passthrough (strict)\n"
	  "  --profile=P        machine profile with a NIC and the nic: netperf keys (kunpeng920)\n"
	  "  --seed=N           simulator seed, 1 to 2^53 (1)\n"
	  "  -h, --help         show this help\n" },
	{ "help", cmd_help, "help [command]", "show help for iommulab or one command", "" },
};

const struct cli_command *cli_find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

void cli_print_command_help(const struct cli_command *c, FILE *f)
{
	fprintf(f, "usage: %s %s\n%s\n%s", CLI_PROG, c->synopsis, c->summary, c->help);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--help|--version] <command> [options]\n"
		"\n"
		"iommulab models the Linux IOMMU DMA-mapping path for Arm SMMUv3 and Intel VT-d\n"
		"on many-node servers and measures it natively and in a deterministic simulation.\n"
		"\n"
		"commands:\n", CLI_PROG);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-6s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun '%s <command> --help' for a command's options.\n", CLI_PROG);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s%s%s: ", CLI_PROG, cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s%s%s --help'.\n", CLI_PROG, cmd ? " " : "", cmd ? cmd : "");
	return CLI_EXIT_USAGE;
}

int cli_bad_option(const char *cmd, int opt, int argc, char **argv)
{
	const char *arg = (optind > 0 && optind - 1 < argc) ? argv[optind - 1] : "?";

	if (opt == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", arg);
	/* getopt_long sets optopt to a known long option's value when it was given a value it
	 * does not take ("--json=1"): not an unknown '-j' */
	if (optopt && strncmp(arg, "--", 2) == 0)
		return cli_usage_error(cmd, "option '%.*s' takes no value", (int)strcspn(arg, "="),
				       arg);
	if (optopt && optopt != '?')
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", arg);
}

int cmd_help(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 2) {
		print_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (argc > 2)
		return cli_usage_error("help", "too many arguments");
	c = cli_find_command(argv[1]);
	if (!c)
		return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
	cli_print_command_help(c, stdout);
	return CLI_EXIT_OK;
}

/* The global options, then the command. Returns its exit code. */
static int dispatch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_command *c;
	int opt;

	opterr = 0;
	/* '+': stop at the command name, whose options are the command's own. */
	while ((opt = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			print_usage(stdout);
			return CLI_EXIT_OK;
		case 'V':
			printf("%s %s\n", CLI_PROG, ILAB_VERSION);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option(NULL, opt, argc, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error(NULL, "no command given");
	c = cli_find_command(argv[optind]);
	if (!c)
		return cli_usage_error(NULL, "unknown command '%s'", argv[optind]);

	argv += optind;
	argc -= optind;
	optind = 0; /* glibc: 0 restarts getopt from scratch for the command's own parse */
	return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
	int ret, out;

	ilab_stdout_checked();
	ilab_afile_remove_on_signal();
	ret = dispatch(argc, argv);
	/* --json > /dev/full: a write that failed in the middle (ferror), not only the last
	 * flush, and the close; one line and exit 1, whatever the command printed */
	out = ilab_stdout_close();

	if (out < 0) {
		fprintf(stderr, "%s: standard output: %s\n", CLI_PROG, strerror(-out));
		return ret == CLI_EXIT_OK ? CLI_EXIT_FAIL : ret;
	}
	return ret;
}

/* cmd_run.c — `iommulab run`: the table of seed experiments and their runner.
 * Not the experiments: none is implemented yet (a later issue fills in .run), so today this
 * says so plainly and lists them.
 */
#include "cli.h"

#include <getopt.h>
#include <stdbool.h>
#include <string.h>

struct experiment {
	const char *id;    /* the seed file number */
	const char *name;
	const char *title;
	int (*run)(void);  /* NULL: not implemented yet */
};

static const struct experiment experiments[] = {
	{ "000", "cma-pernuma", "per-NUMA CMA: CMD_SYNC wait with the SMMU on node 2", NULL },
	{ "001", "dma-domain-lookup", "fast DMA-domain lookup: NIC rx packets/s", NULL },
	{ "002", "map-pages", "map_pages/unmap_pages: dma_map_benchmark latency", NULL },
	{ "003", "ecmdq", "ECMDQ: NIC throughput by number of queues", NULL },
	{ "004", "vfio-node-domains", "VFIO domain per NUMA node: NCCL allreduce bandwidth", NULL },
};

#define NR_EXPERIMENTS (sizeof(experiments) / sizeof(experiments[0]))

static const struct experiment *find_experiment(const char *key)
{
	for (size_t i = 0; i < NR_EXPERIMENTS; i++)
		if (strcmp(experiments[i].id, key) == 0 || strcmp(experiments[i].name, key) == 0)
			return &experiments[i];
	return NULL;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct experiment *chosen[NR_EXPERIMENTS];
	bool seen[NR_EXPERIMENTS] = { false };
	size_t nr = 0;
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (opt != 'h')
			return cli_bad_option("run", opt, argc, argv);
		cli_print_command_help(cli_find_command("run"), stdout);
		return CLI_EXIT_OK;
	}
	for (int i = optind; i < argc; i++) {
		const struct experiment *e = find_experiment(argv[i]);

		if (!e)
			return cli_usage_error("run", "unknown experiment '%s' (known: 000-004)",
					       argv[i]);
		if (!seen[e - experiments]) {
			seen[e - experiments] = true;
			chosen[nr++] = e;
		}
	}
	if (nr == 0)
		for (size_t i = 0; i < NR_EXPERIMENTS; i++)
			chosen[nr++] = &experiments[i];

	int ret = CLI_EXIT_OK, missing = 0;
	for (size_t i = 0; i < nr; i++) {
		if (chosen[i]->run) {
			int r = chosen[i]->run();
			if (r != CLI_EXIT_OK)
				ret = r;
			continue;
		}
		if (missing++ == 0)
			printf("The experiments below are not implemented yet; nothing was run.\n");
		printf("  %s %-18s not implemented: %s\n", chosen[i]->id, chosen[i]->name,
		       chosen[i]->title);
	}
	return ret;
}

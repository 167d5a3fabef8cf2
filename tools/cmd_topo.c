/* cmd_topo.c — `iommulab topo`: load a topology and print it as text or JSON.
 * Not the loader (src/topo does that); this only parses options and reports errors.
 */
#include "cli.h"

#include <getopt.h>
#include <iommulab/topo.h>
#include <stdbool.h>
#include <stdlib.h>

int cmd_topo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *spec = "kunpeng920";
	bool json = false;
	struct ilab_topo *t;
	char err[512];
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":t:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
			spec = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			cli_print_command_help(cli_find_command("topo"), stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option("topo", opt, argc, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error("topo", "unexpected argument '%s'", argv[optind]);

	/* hwloc writes its own complaints about broken files to stderr; we print one line with
	 * the cause instead. A user's HWLOC_HIDE_ERRORS still wins. */
	setenv("HWLOC_HIDE_ERRORS", "2", 0);
	ret = ilab_topo_load(spec, &t, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", CLI_PROG, err);
		return CLI_EXIT_USAGE;
	}
	ret = json ? ilab_topo_print_json(t, stdout) : ilab_topo_print(t, stdout);
	ilab_topo_free(t);
	return ret < 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

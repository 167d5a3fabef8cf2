/* cmd_merge.c — `iommulab merge OUT SHARD...`: the shard files of one sweep (iommulab sweep
 * --shard) into its whole result file, byte for byte what an unsharded run writes, and its
 * plots. The checks (same sweep, every case exactly once) are sweep_result.c's.
 */
#include "cli.h"

#include <getopt.h>
#include <stdbool.h>
#include <string.h>

#include "report/sweep_result.h"
#include "util/output_set.h"

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-plot", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ilab_output_set files = ILAB_OUTPUT_SET_INIT;
	char err[2048];
	bool plot = true;
	json_t *doc;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'N': plot = false; break;
		case 'h':
			cli_print_command_help(cli_find_command("merge"), stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option("merge", opt, argc, argv);
		}
	}
	if (argc - optind < 2)
		return cli_usage_error("merge", "needs the output file and at least one shard");
	if (!*argv[optind])
		return cli_usage_error("merge", "the output file name is empty");
	/* the merged file is none of the shards (`merge g0.json g0.json g1.json`) */
	for (int i = optind + 1; i < argc; i++)
		ilab_output_set_input(&files, argv[i], "the shard");
	if (ilab_output_set_output(&files, argv[optind], "the merged file", err, sizeof(err))) {
		fprintf(stderr, "%s merge: %s\n", CLI_PROG, err);
		ilab_output_set_free(&files);
		return CLI_EXIT_USAGE;
	}
	if (ilab_sweep_merge(argv + optind + 1, (unsigned)(argc - optind - 1), &doc, err,
			     sizeof(err)) < 0) {
		fprintf(stderr, "%s merge: %s\n", CLI_PROG, err);
		ilab_output_set_free(&files);
		return CLI_EXIT_USAGE;
	}
	ret = plot ? cli_sweep_plot_outputs("merge", &files, doc, argv[optind]) : CLI_EXIT_OK;
	ilab_output_set_free(&files);
	if (ret == CLI_EXIT_OK)
		ret = cli_sweep_save("merge", doc, argv[optind], plot);
	json_decref(doc);
	return ret;
}

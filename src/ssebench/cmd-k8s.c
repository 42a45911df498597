/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd-k8s.c: `ssebench k8s node-files DIR`, what a Kubernetes node needs from ssebench
 * before it can host a scored run.
 *
 * The Docker backend gives each run container its seccomp profile and its activity-counter
 * masks on the docker command line (cmd-run.c). A pod spec can express neither: the
 * profile must be a file on the node (seccompProfile type Localhost, read by the
 * kubelet), and containerd's CRI writes its own maskedPaths into the OCI spec, so the masks
 * are added by a runtime handler whose runc wrapper reads masks.json (scripts/k8s-up,
 * docs/kubernetes.md). This command writes both files, from the same code the Docker
 * backend uses, as this node shows them.
 */
#include "config.h"

#include <getopt.h>
#include <sys/stat.h>

#include "sb/counters.h"
#include "sb/fs.h"
#include "sb/json.h"
#include "sb/mem.h"

#include "cli.h"
#include "run.h"

/*
 * The paths a run container masks on this node, as cmd-run.c's add_counter_masks finds
 * them: the counter directories that exist, and the counter files that exist as regular
 * files (runc binds /dev/null over a file, and an empty tmpfs over a directory).
 */
static json_t *
masks_json(void)
{
	_cleanup_argv_ struct sb_argv dirs = SB_ARGV_INIT;
	json_t *a = json_array();
	struct stat st;

	sb_counter_masked_dirs(&dirs);
	for (size_t i = 0; i < dirs.n; i++)
		json_array_append_new(a, json_string(dirs.v[i]));
	for (size_t i = 0; sb_counter_files[i] != NULL; i++)
		if (lstat(sb_counter_files[i], &st) == 0 && S_ISREG(st.st_mode))
			json_array_append_new(a, json_string(sb_counter_files[i]));
	return a;
}

int
cmd_k8s_node_files(const struct cli_command *cmd, int argc, char **argv)
{
	struct sb_error *err = NULL;
	_cleanup_close_ int dfd = -1;
	json_auto_t *prof = NULL, *masks = NULL;
	const char *dir;
	int rc;

	if ((rc = cli_json_flag(cmd, argc, argv, NULL)) >= 0)
		return rc;
	if (optind >= argc)
		return cli_usage_error(cmd, "a directory is needed");
	if (argc - optind > 1)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	dir = argv[optind];

	/* The directory is the node's, readable by the kubelet and the runtime: 0755. */
	if (sb_mkdir_p(dir, 0755, &err) < 0 || (dfd = sb_open_dir(dir, &err)) < 0)
		return cli_fail_err(&err);
	prof = seccomp_profile_json();
	masks = masks_json();
	if (sb_json_write_atomic_at(dfd, "seccomp.json", prof, 0644, &err) < 0 ||
	    sb_json_write_atomic_at(dfd, "masks.json", masks, 0644, &err) < 0) {
		sb_error_prefix(&err, "write in '%s'", dir);
		return cli_fail_err(&err);
	}
	return 0;
}

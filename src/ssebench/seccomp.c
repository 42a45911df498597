/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp.c: the seccomp profile every run container gets (`docker run --security-opt
 * seccomp=FILE`), instead of Docker's default.
 *
 * Why not Docker's default: it refuses unshare(2), mount(2) and clone(2) with namespace
 * flags to any process of a container without CAP_SYS_ADMIN, and the runner's sandbox
 * (sb/sandbox.h) needs exactly those, unprivileged, inside a user namespace of its own.
 * The alternatives were worse: CAP_SYS_ADMIN for the container would give root in it what
 * it needs to leave it (a cgroup v1 release agent, for one), and a run without the sandbox
 * gives the agent's code at grading time a network and a /tmp it shares.
 *
 * What this profile is, then: it denies, to every process of the container, root
 * included, the system calls no process of a run has any use for (kernel modules, kexec,
 * keyrings, bpf, perf, io_uring, userfaultfd, clocks, swap, quotas, the new mount API,
 * process_vm_*, ...). Everything else is allowed here, because the processes that run code
 * the agent wrote are held by a stricter filter of our own, loaded by the process that
 * starts them, after their uid drop and before exec (src/libsb/priv.c:
 * sb_seccomp_compile): the agent, its bash tool, the MCP server, the daemon's fronts and
 * the task scripts all run under it, and it also denies unshare, setns, mount and every
 * clone namespace flag. So a new namespace can be made only by root's own processes and by
 * the runner's sandbox set-up, before its filter.
 *
 * The list is written here from the kernel's system call names; an architecture that does
 * not have a name ignores it. Architectures: the machine's own and its compat ones (a
 * system call made through another ABI than those listed is refused by the kernel filter).
 */
#include "config.h"

#include <string.h>
#include <sys/utsname.h>

#include "sb/json.h"
#include "sb/mem.h"

#include "run.h"

/*
 * Denied to every process of a run container (EPERM). pivot_root is not: the runner's
 * sandbox enters a root of its own with it, inside its user namespace. Nothing else can use
 * it: the container's root has no CAP_SYS_ADMIN (Docker's default set), and every process
 * that runs code the agent wrote is under the stricter filter, which denies it.
 */
static const char *const denied[] = {
	"acct", "add_key", "bpf", "clock_adjtime", "clock_adjtime64", "clock_settime",
	"clock_settime64", "create_module", "delete_module", "finit_module", "fsconfig",
	"fsmount", "fsopen", "fspick", "get_kernel_syms", "init_module", "io_uring_enter",
	"io_uring_register", "io_uring_setup", "ioperm", "iopl", "kcmp", "kexec_file_load",
	"kexec_load", "keyctl", "lookup_dcookie", "move_mount", "name_to_handle_at",
	"nfsservctl", "open_by_handle_at", "open_tree", "perf_event_open", "process_vm_readv",
	"process_vm_writev", "query_module", "quotactl", "quotactl_fd",
	"reboot", "request_key", "setns", "settimeofday", "stime", "swapoff", "swapon", "sysfs",
	"_sysctl", "syslog", "uselib", "userfaultfd", "ustat", "vhangup", "vm86", "vm86old",
	NULL,
};

json_t *
seccomp_profile_json(void)
{
	struct utsname u;
	json_t *names = json_array(), *arches = json_array(), *rule;

	for (const char *const *p = denied; *p != NULL; p++)
		json_array_append_new(names, json_string(*p));
	if (uname(&u) == 0 && strcmp(u.machine, "aarch64") == 0) {
		json_array_append_new(arches, json_string("SCMP_ARCH_AARCH64"));
		json_array_append_new(arches, json_string("SCMP_ARCH_ARM"));
	} else {
		json_array_append_new(arches, json_string("SCMP_ARCH_X86_64"));
		json_array_append_new(arches, json_string("SCMP_ARCH_X86"));
		json_array_append_new(arches, json_string("SCMP_ARCH_X32"));
	}
	rule = json_pack("{s:o, s:s}", "names", names, "action", "SCMP_ACT_ERRNO");
	return json_pack("{s:s, s:o, s:[o]}", "defaultAction", "SCMP_ACT_ALLOW", "architectures",
	    arches, "syscalls", rule);
}

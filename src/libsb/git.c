/* SPDX-License-Identifier: Apache-2.0 */
/*
 * git.c: patch capture with libgit2 against a private baseline (see git.h).
 *
 * Design. The upstream harness ran the git CLI with GIT_DIR set to a private bare repository
 * and GIT_WORK_TREE set to the source tree: `read-tree --reset <base>`, `add -N` for untracked
 * files, then `diff --binary <base>`. Here the same comparison is one libgit2 call: the
 * private index always holds exactly the base tree, so an index-to-workdir diff with
 * untracked content is "base versus everything in the tree". The index also serves as a stat
 * cache: GIT_DIFF_UPDATE_INDEX records the stat data of files whose content turned out to
 * equal the base, so a poll only reads the files that changed. Only stat data is ever
 * updated (libgit2 re-adds an entry only when the hash and mode both match the base entry),
 * and sb_git_baseline_open() re-reads the base tree into the index, keeping stat data, so
 * its content is the base tree even if the file was tampered with.
 *
 * Why nothing the agent planted can run: libgit2 has no code that runs hooks, clean/smudge
 * filter commands, textconv, external diff drivers or fsmonitor; it only knows the built-in
 * crlf and ident filters. The configuration it reads is the private repository's own
 * (sb_git_init() empties the global/XDG/system search paths, so HOME and /etc are never
 * looked at). The agent's own repository (for the base objects at creation, and for the
 * commits log) is opened as a bare object database: refs are read by hand and its config is
 * never parsed.
 *
 * Why nothing the agent planted can hang us: libgit2 opens files with a blocking open(2)
 * that follows links. Worktree content is safe (it lstat()s first and never opens a FIFO
 * or a link), but .gitignore/.gitattributes/.gitmodules and the files of the agent's .git
 * are opened as they are; a FIFO there would block for ever. Those are checked first (see
 * control_file_ok and check_plain_tree). The check and libgit2's open are not atomic, so an
 * agent that is still running can win that race: callers serving a live agent should still
 * run captures under a timeout (the final capture, after the agent is gone, cannot race).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/buf.h"
#include "sb/fs.h"
#include "sb/git.h"
#include "sb/limits.h"
#include "sb/mem.h"
#include "sb/tree.h"

/*
 * Cleanup helpers for the libgit2 handles we use (docs/design.md, "Cleanup and ownership");
 * every *_free takes NULL.
 */
#define DEFINE_GIT_FREEP(type)                    \
	static inline void type##_freep(type **p) \
	{                                         \
		type##_free(*p);                  \
	}
DEFINE_GIT_FREEP(git_repository)
DEFINE_GIT_FREEP(git_index)
DEFINE_GIT_FREEP(git_odb)
DEFINE_GIT_FREEP(git_odb_object)
DEFINE_GIT_FREEP(git_commit)
DEFINE_GIT_FREEP(git_tree)
DEFINE_GIT_FREEP(git_config)
DEFINE_GIT_FREEP(git_diff)
DEFINE_GIT_FREEP(git_patch)
DEFINE_GIT_FREEP(git_revwalk)

struct sb_git_baseline {
	git_repository *repo; /* the private bare repository, with the worktree bound to it */
	git_index *index;     /* the private index (also the repository's index) */
	git_odb *odb;	      /* the private object database */
	git_tree *tree;	      /* the base tree */
	git_oid base;	      /* the base commit */
	char base_hex[GIT_OID_HEXSZ + 1];
	char *worktree;	 /* as given to sb_git_baseline_open */
	int worktree_fd; /* O_PATH directory fd of the worktree, for our own lstat checks */
};

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool init_done;

/* An errno-like code for a libgit2 return value. */
static int
git_errno(int gerr)
{
	switch (gerr) {
	case GIT_ENOTFOUND:
	case GIT_EUNBORNBRANCH:
		return ENOENT;
	case GIT_EEXISTS:
		return EEXIST;
	case GIT_ELOCKED:
		return EBUSY;
	case GIT_EOWNER:
		return EPERM;
	default:
		return EIO;
	}
}

/* Store "<what>: <libgit2's last message>" in *err and return -1. */
static int _printf_(3, 4)
git_fail(struct sb_error **err, int gerr, const char *fmt, ...)
{
	_cleanup_free_ char *what = NULL;
	const git_error *e = git_error_last();
	va_list ap;

	va_start(ap, fmt);
	what = sb_xvasprintf(fmt, ap);
	va_end(ap);
	return sb_error_set(err, git_errno(gerr), "%s: %s", what,
	    e != NULL && e->message != NULL ? e->message : "libgit2 error");
}

static int
require_init(struct sb_error **err)
{
	bool done;

	pthread_mutex_lock(&init_lock);
	done = init_done;
	pthread_mutex_unlock(&init_lock);
	if (!done)
		return sb_error_set(err, EINVAL, "sb_git_init() was not called");
	return 0;
}

int
sb_git_init(struct sb_error **err)
{
	/*
	 * Every level libgit2 would look for a configuration file at, other than the
	 * repository's own. An empty search path finds nothing, so neither ~/.gitconfig,
	 * $XDG_CONFIG_HOME/git/{config,ignore,attributes} nor /etc/gitconfig is read, whatever
	 * HOME and XDG_CONFIG_HOME say now or later.
	 */
	static const int levels[] = {
		GIT_CONFIG_LEVEL_PROGRAMDATA,
		GIT_CONFIG_LEVEL_SYSTEM,
		GIT_CONFIG_LEVEL_XDG,
		GIT_CONFIG_LEVEL_GLOBAL,
	};
	int r = 0;

	pthread_mutex_lock(&init_lock);
	if (init_done)
		goto out;
	r = git_libgit2_init();
	if (r < 0) {
		git_fail(err, r, "libgit2 init");
		goto out;
	}
	for (size_t i = 0; i < SB_ARRAY_SIZE(levels); i++) {
		r = git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "");
		if (r < 0) {
			git_fail(err, r, "empty the git config search path (level %d)", levels[i]);
			git_libgit2_shutdown();
			goto out;
		}
	}
	/* Templates are only used when asked for; make sure none from the system is found. */
	r = git_libgit2_opts(GIT_OPT_SET_TEMPLATE_PATH, "");
	if (r < 0) {
		git_fail(err, r, "empty the git template path");
		git_libgit2_shutdown();
		goto out;
	}
	init_done = true;
out:
	pthread_mutex_unlock(&init_lock);
	return r < 0 ? -1 : 0;
}

/*
 * Check that everything below parent/name is a plain directory or regular file, visiting at
 * most *budget entries. libgit2 opens object files with a blocking open(2) that follows
 * links, so a FIFO (or a link to one) planted in .git/objects would hang us for ever.
 */
static int
check_plain_tree(int parent, const char *name, unsigned depth, size_t *budget)
{
	struct dirent *de;
	int fd, r = 0;
	DIR *d;

	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return -1;
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		unsigned char type = de->d_type;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (*budget == 0) {
			r = -1;
			break;
		}
		(*budget)--;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				type = DT_UNKNOWN;
			else if (S_ISREG(st.st_mode))
				type = DT_REG;
			else if (S_ISDIR(st.st_mode))
				type = DT_DIR;
		}
		if (type == DT_DIR && depth < 4)
			r = check_plain_tree(dirfd(d), de->d_name, depth + 1, budget);
		else if (type != DT_REG)
			r = -1;
	}
	closedir(d);
	return r;
}

/* 40 hex digits and nothing else. */
static int
parse_oid(const char *s, git_oid *ret)
{
	if (strlen(s) != GIT_OID_HEXSZ || git_oid_fromstrn(ret, s, GIT_OID_HEXSZ) < 0)
		return -1;
	return 0;
}

/*
 * Look refname up in packed-refs: lines "<40 hex> <refname>", plus "# ..." headers and
 * "^<hex>" peeled lines.
 */
static int
resolve_packed_ref(int gitfd, const char *name, git_oid *ret)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_GIT_REF_FILE_MAX);
	size_t namelen = strlen(name);
	char *line, *next;

	if (sb_read_file_at(gitfd, "packed-refs", SB_OPEN_NO_SYMLINKS, &b, NULL) < 0)
		return -1;
	for (line = b.s; line < b.s + b.len; line = next) {
		char *nl = memchr(line, '\n', (size_t)(b.s + b.len - line));

		next = nl != NULL ? nl + 1 : b.s + b.len;
		if (nl != NULL)
			*nl = '\0';
		if (strlen(line) == GIT_OID_HEXSZ + 1 + namelen && line[GIT_OID_HEXSZ] == ' ' &&
		    strcmp(line + GIT_OID_HEXSZ + 1, name) == 0) {
			line[GIT_OID_HEXSZ] = '\0';
			return parse_oid(line, ret);
		}
	}
	return -1;
}

/*
 * Resolve HEAD (or a "refs/..." name it points at) to an object id by reading the ref files
 * ourselves: O_NONBLOCK, no links, bounded size (fs.h), so neither a FIFO nor a huge file
 * planted by the agent can hold us, and libgit2 never parses the agent's config.
 */
static int
resolve_ref(int gitfd, const char *name, unsigned depth, git_oid *ret)
{
	_cleanup_buf_ struct sb_buf b = SB_BUF_INIT(SB_GIT_REF_FILE_MAX);
	_cleanup_error_ struct sb_error *e = NULL;
	int valid = 0;

	if (depth > 5)
		return -1;
	if (strcmp(name, "HEAD") != 0 &&
	    (strncmp(name, "refs/", 5) != 0 || git_reference_name_is_valid(&valid, name) < 0 ||
		!valid))
		return -1;
	if (sb_read_file_at(gitfd, name, SB_OPEN_NO_SYMLINKS, &b, &e) == 0) {
		sb_buf_rtrim(&b);
		if (strncmp(b.s, "ref: ", 5) == 0)
			return resolve_ref(gitfd, b.s + 5, depth + 1, ret);
		return parse_oid(b.s, ret);
	}
	if (sb_error_code(e) == ENOENT && strcmp(name, "HEAD") != 0)
		return resolve_packed_ref(gitfd, name, ret);
	return -1;
}

int
sb_git_resolve_head(int gitfd, char hex[41])
{
	git_oid id;

	if (resolve_ref(gitfd, "HEAD", 0, &id) < 0)
		return -1;
	git_oid_tostr(hex, 41, &id);
	return 0;
}

/*
 * Open the worktree's own repository for reading objects, and nothing else: worktree/.git
 * must be a real directory (a planted link or "gitdir:" file is refused), its objects must
 * be plain files with no alternates pointing elsewhere, HEAD is resolved by hand, and the
 * libgit2 handle wraps just the object database: no path, no config, no worktree, so the
 * agent's .git/config (and anything it includes) is never read. On success *ret_repo (the
 * caller's) and *ret_head are set; err may be NULL.
 */
static int
open_agent_repo(const char *worktree, git_repository **ret_repo, git_oid *ret_head,
    struct sb_error **err)
{
	_cleanup_(git_odb_freep) git_odb *odb = NULL;
	_cleanup_free_ char *objects = NULL;
	_cleanup_close_ int wt = -1, gitfd = -1;
	size_t budget = SB_GIT_OBJECT_FILES_MAX;
	struct stat st;
	git_oid head;
	int r;

	wt = open(worktree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (wt < 0)
		return sb_error_errno(err, errno, "open '%s'", worktree);
	gitfd = openat(wt, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (gitfd < 0)
		return sb_error_set(err, ENOENT, "'%s/.git' is not a directory", worktree);
	if (fstatat(gitfd, "objects/info/alternates", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return sb_error_set(err, EINVAL, "'%s/.git' has alternates", worktree);
	if (check_plain_tree(gitfd, "objects", 0, &budget) < 0)
		return sb_error_set(err, EINVAL, "'%s/.git/objects' is not plain files", worktree);
	if (resolve_ref(gitfd, "HEAD", 0, &head) < 0)
		return sb_error_set(err, ENOENT, "'%s' has no HEAD commit", worktree);
	objects = sb_xasprintf("%s/.git/objects", worktree);
	r = git_odb_open(&odb, objects);
	if (r < 0)
		return git_fail(err, r, "open '%s'", objects);
	r = git_repository_wrap_odb(ret_repo, odb);
	if (r < 0)
		return git_fail(err, r, "open '%s'", objects);
	*ret_head = head;
	return 0;
}

/*
 * libgit2 reads .gitignore and .gitattributes (and .gitmodules) from the worktree with a
 * blocking open(2) that follows links: a FIFO planted under one of those names would hang
 * the capture for ever (the final patch included). Look at dir+name the way libgit2 will
 * open it (following links: stat(2) never blocks) and accept only what cannot block: a
 * regular file, a directory, or nothing at all.
 */
static bool
control_file_ok(int wtfd, const char *dir, const char *name)
{
	_cleanup_free_ char *p = sb_xasprintf("%s%s", dir, name);
	struct stat st;

	if (fstatat(wtfd, p, &st, 0) < 0)
		return true; /* absent or unreachable: libgit2's open fails as fast */
	return S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
}

struct copy_ctx {
	git_odb *from, *to;
	int error; /* the libgit2 code that stopped the walk */
	git_oid failed;
};

/* Copy one object between object databases (unless it is there already), checking its id. */
static int
copy_object(git_odb *from, git_odb *to, const git_oid *id)
{
	_cleanup_(git_odb_object_freep) git_odb_object *obj = NULL;
	git_oid written;
	int r;

	if (git_odb_exists(to, id))
		return 0;
	r = git_odb_read(&obj, from, id);
	if (r < 0)
		return r;
	r = git_odb_write(&written, to, git_odb_object_data(obj), git_odb_object_size(obj),
	    git_odb_object_type(obj));
	if (r < 0)
		return r;
	if (!git_oid_equal(&written, id)) {
		git_error_set_str(GIT_ERROR_ODB, "object hashes to a different id");
		return GIT_ERROR;
	}
	return 0;
}

/* git_tree_walk callback: copy every tree and blob; gitlinks name commits of other repos. */
static int
copy_tree_entry(const char *root, const git_tree_entry *entry, void *payload)
{
	struct copy_ctx *ctx = payload;
	int r;

	switch (git_tree_entry_type(entry)) {
	case GIT_OBJECT_TREE:
	case GIT_OBJECT_BLOB:
		break;
	case GIT_OBJECT_ANY:
	case GIT_OBJECT_INVALID:
	case GIT_OBJECT_COMMIT:
	case GIT_OBJECT_TAG:
	case GIT_OBJECT_OFS_DELTA:
	case GIT_OBJECT_REF_DELTA:
		return 0;
	}
	r = copy_object(ctx->from, ctx->to, git_tree_entry_id(entry));
	if (r < 0) {
		ctx->error = r;
		git_oid_cpy(&ctx->failed, git_tree_entry_id(entry));
		return -1;
	}
	return 0;
}

/*
 * Write the private repository's config: exactly the settings the capture relies on. Types
 * and modes are compared as they are on Linux, line endings are never converted, and no
 * reflog is kept.
 */
static int
write_private_config(git_repository *repo, struct sb_error **err)
{
	static const struct {
		const char *name;
		bool value;
	} bools[] = {
		{ "core.symlinks", true },
		{ "core.filemode", true },
		{ "core.ignorecase", false },
		{ "core.precomposeunicode", false },
		{ "core.logallrefupdates", false },
		{ "core.trustctime", true },
	};
	_cleanup_(git_config_freep) git_config *cfg = NULL;
	int r;

	r = git_repository_config(&cfg, repo);
	if (r < 0)
		return git_fail(err, r, "open the private config");
	for (size_t i = 0; i < SB_ARRAY_SIZE(bools); i++) {
		r = git_config_set_bool(cfg, bools[i].name, bools[i].value);
		if (r < 0)
			return git_fail(err, r, "set %s", bools[i].name);
	}
	r = git_config_set_string(cfg, "core.autocrlf", "false");
	if (r < 0)
		return git_fail(err, r, "set core.autocrlf");
	r = git_config_set_string(cfg, "core.safecrlf", "false");
	if (r < 0)
		return git_fail(err, r, "set core.safecrlf");
	return 0;
}

/* Everything of sb_git_baseline_create between mkdir and the final open. */
static int
baseline_populate(git_repository *src, const git_oid *base, const char *private_dir,
    struct sb_error **err)
{
	_cleanup_(git_repository_freep) git_repository *dst = NULL;
	_cleanup_(git_odb_freep) git_odb *src_odb = NULL, *dst_odb = NULL;
	_cleanup_(git_commit_freep) git_commit *commit = NULL;
	_cleanup_(git_tree_freep) git_tree *tree = NULL;
	_cleanup_(git_index_freep) git_index *index = NULL;
	_cleanup_free_ char *hooks = NULL, *index_path = NULL;
	git_repository_init_options opts;
	struct copy_ctx ctx;
	int r;

	r = git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	if (r < 0)
		return git_fail(err, r, "init options");
	/* Bare, no reinitialisation of something that already looks like a repository. */
	opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_NO_REINIT;
	r = git_repository_init_ext(&dst, private_dir, &opts);
	if (r < 0)
		return git_fail(err, r, "init '%s'", private_dir);
	/* libgit2's built-in template makes an empty hooks/; a baseline has no hooks at all. */
	hooks = sb_xasprintf("%s/hooks", private_dir);
	(void)sb_remove_tree_at(AT_FDCWD, hooks, NULL); /* best effort: our own directory */
	if (write_private_config(dst, err) < 0)
		return -1;

	/* The objects of the base: the commit, then its tree and everything below it. */
	r = git_repository_odb(&src_odb, src);
	if (r < 0)
		return git_fail(err, r, "open the worktree's objects");
	r = git_repository_odb(&dst_odb, dst);
	if (r < 0)
		return git_fail(err, r, "open the private objects");
	r = copy_object(src_odb, dst_odb, base);
	if (r < 0)
		return git_fail(err, r, "copy the base commit");
	r = git_commit_lookup(&commit, dst, base);
	if (r < 0)
		return git_fail(err, r, "read the base commit");
	r = copy_object(src_odb, dst_odb, git_commit_tree_id(commit));
	if (r < 0)
		return git_fail(err, r, "copy the base tree");
	r = git_commit_tree(&tree, commit);
	if (r < 0)
		return git_fail(err, r, "read the base tree");
	memset(&ctx, 0, sizeof(ctx));
	ctx.from = src_odb;
	ctx.to = dst_odb;
	r = git_tree_walk(tree, GIT_TREEWALK_PRE, copy_tree_entry, &ctx);
	if (r < 0) {
		char hex[GIT_OID_HEXSZ + 1];

		git_oid_tostr(hex, sizeof(hex), &ctx.failed);
		return git_fail(err, ctx.error < 0 ? ctx.error : r, "copy object %s", hex);
	}

	/* HEAD detached at the base: sb_git_baseline_open reads the base from there. */
	r = git_repository_set_head_detached(dst, base);
	if (r < 0)
		return git_fail(err, r, "set the private HEAD");

	/* The private index: the base tree, stat data filled in by the first refresh. */
	index_path = sb_xasprintf("%s/index", private_dir);
	r = git_index_open(&index, index_path);
	if (r < 0)
		return git_fail(err, r, "create the private index");
	r = git_index_read_tree(index, tree);
	if (r < 0)
		return git_fail(err, r, "read the base tree into the index");
	r = git_index_write(index);
	if (r < 0)
		return git_fail(err, r, "write the private index");
	return 0;
}

/* What the diff callbacks share during one diff. */
struct diff_state {
	int wtfd;	   /* the worktree, for control_file_ok */
	size_t ndeltas;	   /* deltas kept so far */
	size_t max_deltas; /* more cannot fit under the size cap (or SB_GIT_CHANGED_FILES_MAX) */
	bool too_many;
	char *unreadable; /* the first path libgit2 could not read */
	char *bad;	  /* the first control file that could block */
};

static void
diff_state_release(struct diff_state *st)
{
	free(st->unreadable);
	free(st->bad);
	st->unreadable = st->bad = NULL;
}

/*
 * Check the control files of directory dir ("" for the root, else "a/b/") before libgit2
 * reads them; .gitmodules only matters at the root.
 */
static int
check_dir_controls(struct diff_state *st, const char *dir)
{
	static const char *const names[] = { ".gitignore", ".gitattributes", ".gitmodules" };
	size_t n = dir[0] == '\0' ? 3 : 2;

	for (size_t i = 0; i < n; i++) {
		if (!control_file_ok(st->wtfd, dir, names[i])) {
			if (st->bad == NULL)
				st->bad = sb_xasprintf("%s%s", dir, names[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * git_diff_progress_cb, called for every item before libgit2 handles it, and so for every
 * directory ("a/b/") before libgit2 enters it and reads its .gitignore: check that first.
 */
static int
diff_progress(const git_diff *diff_so_far, const char *old_path, const char *new_path,
    void *payload)
{
	struct diff_state *st = payload;
	size_t n = new_path != NULL ? strlen(new_path) : 0;

	if (n == 0 || new_path[n - 1] != '/')
		return 0;
	return check_dir_controls(st, new_path);
}

/*
 * git_diff_notify_cb: decide, as the diff is built, which deltas to keep. Returning > 0 drops
 * the delta, < 0 stops the diff.
 */
static int
diff_notify(const git_diff *diff_so_far, const git_diff_delta *d, const char *pathspec,
    void *payload)
{
	struct diff_state *st = payload;
	_cleanup_free_ char *dir = NULL;

	switch (d->status) {
	case GIT_DELTA_UNTRACKED:
		/*
		 * An untracked entry that is a directory is one libgit2 did not descend into:
		 * it holds a .git (a nested repository). Upstream skips these too.
		 */
		if (d->new_file.mode == GIT_FILEMODE_TREE)
			return 1;
		break;
	case GIT_DELTA_UNREADABLE:
		if (st->unreadable == NULL)
			st->unreadable = sb_xstrdup(d->new_file.path);
		return -1;
	case GIT_DELTA_IGNORED:
	case GIT_DELTA_UNMODIFIED:
		return 1;
	case GIT_DELTA_ADDED:
	case GIT_DELTA_DELETED:
	case GIT_DELTA_MODIFIED:
	case GIT_DELTA_RENAMED:
	case GIT_DELTA_COPIED:
	case GIT_DELTA_TYPECHANGE:
	case GIT_DELTA_CONFLICTED:
		break;
	}
	if (++st->ndeltas > st->max_deltas) {
		st->too_many = true;
		return -1;
	}
	/*
	 * Printing this delta looks up its diff attributes in every directory of its path,
	 * including directories the walk never entered (a deleted file's, now perhaps a link
	 * somewhere else): check those .gitattributes too.
	 */
	dir = sb_xstrdup(d->old_file.path);
	for (char *slash = dir; (slash = strchr(slash, '/')) != NULL; slash++) {
		char saved = slash[1];

		slash[1] = '\0';
		if (check_dir_controls(st, dir) < 0)
			return -1;
		slash[1] = saved;
	}
	return 0;
}

/*
 * The one diff both the refresh and the capture run: the index (= the base tree) against
 * the worktree, with opts (flags, prefixes...) from the caller and the callbacks above. With
 * GIT_DIFF_UPDATE_INDEX, libgit2 writes the index at the end; if another process holds its
 * lock, the diff is run again without saving the refresh.
 */
static int
run_diff(struct sb_git_baseline *b, git_diff_options *opts, struct diff_state *st,
    git_diff **ret, struct sb_error **err)
{
	int r;

	st->wtfd = b->worktree_fd;
	opts->progress_cb = diff_progress;
	opts->notify_cb = diff_notify;
	opts->payload = st;
	/* The root's control files are read before the first callback. */
	if (check_dir_controls(st, "") < 0)
		return sb_error_set(err, EINVAL, "'%s' is not a regular file", st->bad);
	r = git_diff_index_to_workdir(ret, b->repo, b->index, opts);
	if (r == GIT_ELOCKED && (opts->flags & GIT_DIFF_UPDATE_INDEX) != 0) {
		git_error_clear();
		st->ndeltas = 0;
		opts->flags &= ~(uint32_t)GIT_DIFF_UPDATE_INDEX;
		r = git_diff_index_to_workdir(ret, b->repo, b->index, opts);
	}
	if (r >= 0)
		return 0;
	*ret = NULL;
	if (st->bad != NULL)
		return sb_error_set(err, EINVAL, "'%s' is not a regular file", st->bad);
	if (st->unreadable != NULL)
		return sb_error_set(err, EACCES, "cannot read '%s'", st->unreadable);
	if (st->too_many)
		return sb_error_set(err, EFBIG, "more than %zu changed files", st->max_deltas);
	return git_fail(err, r, "diff the worktree against the base");
}

/*
 * Refresh the index's stat cache against the worktree (tracked files only) and save it. Used
 * once at creation so that the first capture does not have to hash the whole tree.
 */
static int
baseline_refresh(struct sb_git_baseline *b, struct sb_error **err)
{
	_cleanup_(git_diff_freep) git_diff *diff = NULL;
	_cleanup_(diff_state_release) struct diff_state st = { 0 };
	git_diff_options opts;
	int r;

	r = git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (r < 0)
		return git_fail(err, r, "diff options");
	opts.flags = GIT_DIFF_UPDATE_INDEX | GIT_DIFF_IGNORE_SUBMODULES;
	opts.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
	st.max_deltas = SB_GIT_CHANGED_FILES_MAX;
	if (run_diff(b, &opts, &st, &diff, err) < 0)
		return sb_error_prefix(err, "refresh the private index");
	return 0;
}

int
sb_git_baseline_create(const char *worktree, const char *private_dir, struct sb_error **err)
{
	_cleanup_(git_repository_freep) git_repository *src = NULL;
	_cleanup_(git_commit_freep) git_commit *head = NULL;
	_cleanup_git_baseline_ struct sb_git_baseline *b = NULL;
	git_oid base;
	int r;

	if (require_init(err) < 0)
		return -1;
	if (open_agent_repo(worktree, &src, &base, err) < 0)
		return -1;
	r = git_commit_lookup(&head, src, &base);
	if (r < 0)
		return git_fail(err, r, "HEAD of '%s' is not a commit", worktree);

	if (mkdir(private_dir, 0700) < 0)
		return sb_error_errno(err, errno, "create '%s'", private_dir);
	if (baseline_populate(src, &base, private_dir, err) < 0 ||
	    sb_git_baseline_open(private_dir, worktree, &b, err) < 0 ||
	    baseline_refresh(b, err) < 0) {
		sb_git_baseline_free(TAKE_PTR(b));
		(void)sb_remove_tree_at(AT_FDCWD, private_dir, NULL); /* best effort: our own */
		return sb_error_prefix(err, "baseline '%s'", private_dir);
	}
	return 0;
}

int
sb_git_baseline_open(const char *private_dir, const char *worktree,
    struct sb_git_baseline **ret, struct sb_error **err)
{
	_cleanup_git_baseline_ struct sb_git_baseline *b = NULL;
	_cleanup_(git_commit_freep) git_commit *commit = NULL;
	_cleanup_free_ char *index_path = NULL;
	struct stat st;
	int r;

	if (require_init(err) < 0)
		return -1;
	if (lstat(private_dir, &st) < 0)
		return sb_error_errno(err, errno, "baseline '%s'", private_dir);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, ENOENT, "baseline '%s' is not a directory", private_dir);

	b = sb_xcalloc(1, sizeof(*b));
	b->worktree_fd = -1;
	b->worktree = sb_xstrdup(worktree);
	b->worktree_fd = open(worktree, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b->worktree_fd < 0)
		return sb_error_errno(err, errno, "open worktree '%s'", worktree);

	r = git_repository_open_ext(&b->repo, private_dir,
	    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_NO_DOTGIT |
		GIT_REPOSITORY_OPEN_BARE,
	    NULL);
	if (r < 0)
		return git_fail(err, r, "open baseline '%s'", private_dir);
	/* 0: do not write a .git file into the worktree pointing back at us. */
	r = git_repository_set_workdir(b->repo, worktree, 0);
	if (r < 0)
		return git_fail(err, r, "bind worktree '%s'", worktree);
	r = git_repository_odb(&b->odb, b->repo);
	if (r < 0)
		return git_fail(err, r, "baseline '%s': objects", private_dir);

	r = git_reference_name_to_id(&b->base, b->repo, "HEAD");
	if (r < 0)
		return git_fail(err, r, "baseline '%s': HEAD", private_dir);
	git_oid_tostr(b->base_hex, sizeof(b->base_hex), &b->base);
	r = git_commit_lookup(&commit, b->repo, &b->base);
	if (r < 0)
		return git_fail(err, r, "baseline '%s': base commit", private_dir);
	r = git_commit_tree(&b->tree, commit);
	if (r < 0)
		return git_fail(err, r, "baseline '%s': base tree", private_dir);

	/*
	 * The private index, made the repository's index so that GIT_DIFF_UPDATE_INDEX updates
	 * it. Reading the base tree into it keeps the stat data of every entry whose mode and
	 * id match, and puts the content back to the base tree whatever the file said.
	 */
	index_path = sb_xasprintf("%s/index", private_dir);
	r = git_index_open(&b->index, index_path);
	if (r < 0)
		return git_fail(err, r, "baseline '%s': index", private_dir);
	r = git_repository_set_index(b->repo, b->index);
	if (r < 0)
		return git_fail(err, r, "baseline '%s': index", private_dir);
	r = git_index_read_tree(b->index, b->tree);
	if (r < 0)
		return git_fail(err, r, "baseline '%s': index", private_dir);

	*ret = TAKE_PTR(b);
	return 0;
}

void
sb_git_baseline_free(struct sb_git_baseline *b)
{
	if (b == NULL)
		return;
	git_tree_free(b->tree);
	git_index_free(b->index);
	git_odb_free(b->odb);
	git_repository_free(b->repo);
	sb_close(b->worktree_fd);
	free(b->worktree);
	free(b);
}

const char *
sb_git_baseline_commit(const struct sb_git_baseline *b)
{
	return b->base_hex;
}

/* git_diff_line_cb: append one line of patch text to the capped buffer. */
struct print_state {
	struct sb_buf *out;
	bool no_hunks; /* a text delta without hunks: an empty file added or deleted */
	bool full;
};

/*
 * Append a file header ("diff --git" up to "+++ b/x") the way git prints it, where libgit2
 * differs in two details: git prints the "--- " and "+++ " lines only in front of a first
 * hunk (so a header without hunks ends at the index line), and it ends those two lines with
 * a tab when the name contains a space (a GNU diff convention that keeps the name
 * unambiguous). Names with a newline are quoted, so every '\n' here ends a header line.
 */
static int
append_file_header(struct print_state *ps, const char *s, size_t len)
{
	while (len > 0) {
		const char *nl = memchr(s, '\n', len);
		size_t n = nl != NULL ? (size_t)(nl - s) : len; /* without the newline */
		bool label = n >= 4 && (memcmp(s, "--- ", 4) == 0 || memcmp(s, "+++ ", 4) == 0);

		if (label && ps->no_hunks)
			return 0;
		if (sb_buf_append(ps->out, s, n, NULL) < 0)
			return -1;
		if (label && memchr(s + 4, ' ', n - 4) != NULL &&
		    sb_buf_appendc(ps->out, '\t', NULL) < 0)
			return -1;
		if (nl == NULL)
			return 0;
		if (sb_buf_appendc(ps->out, '\n', NULL) < 0)
			return -1;
		s += n + 1;
		len -= n + 1;
	}
	return 0;
}

static int
capture_print(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
    void *payload)
{
	struct print_state *ps = payload;

	switch (l->origin) {
	case GIT_DIFF_LINE_FILE_HDR:
		if (append_file_header(ps, l->content, l->content_len) < 0)
			goto full;
		return 0;
	case GIT_DIFF_LINE_CONTEXT:
	case GIT_DIFF_LINE_ADDITION:
	case GIT_DIFF_LINE_DELETION:
		/* These come without their marker; every other kind of line has it. */
		if (sb_buf_appendc(ps->out, l->origin, NULL) < 0)
			goto full;
		break;
	default:
		break;
	}
	if (sb_buf_append(ps->out, l->content, l->content_len, NULL) < 0)
		goto full;
	return 0;
full:
	ps->full = true;
	return -1;
}

/* Map a delta to a /files status; false for deltas that are not reported. */
static bool
delta_status(git_delta_t s, enum sb_git_status *ret)
{
	switch (s) {
	case GIT_DELTA_ADDED:
	case GIT_DELTA_UNTRACKED:
		*ret = SB_GIT_ADDED;
		return true;
	case GIT_DELTA_DELETED:
		*ret = SB_GIT_DELETED;
		return true;
	case GIT_DELTA_MODIFIED:
	case GIT_DELTA_TYPECHANGE:
		*ret = SB_GIT_MODIFIED;
		return true;
	case GIT_DELTA_UNMODIFIED:
	case GIT_DELTA_RENAMED:
	case GIT_DELTA_COPIED:
	case GIT_DELTA_IGNORED:
	case GIT_DELTA_UNREADABLE:
	case GIT_DELTA_CONFLICTED:
		return false;
	}
	return false;
}

/*
 * Refuse to load a file that is too big to diff in memory: libgit2 reads both sides of a
 * changed file whole (and keeps only 32 bits of a worktree file's size in its stat data,
 * so we lstat the file ourselves).
 */
static int
check_sizes(struct sb_git_baseline *b, const git_diff_delta *d, struct sb_error **err)
{
	struct stat st;

	if (d->status != GIT_DELTA_DELETED &&
	    sb_lstat_nofollow(b->worktree_fd, d->new_file.path, &st, NULL) == 0 && S_ISREG(st.st_mode) &&
	    (unsigned long long)st.st_size > SB_GIT_FILE_MAX)
		return sb_error_set(err, EFBIG, "'%s' is larger than %llu bytes",
		    d->new_file.path, (unsigned long long)SB_GIT_FILE_MAX);
	if (d->status == GIT_DELTA_MODIFIED || d->status == GIT_DELTA_DELETED) {
		git_object_t type;
		size_t len;

		if (git_odb_read_header(&len, &type, b->odb, &d->old_file.id) == 0 &&
		    len > SB_GIT_FILE_MAX)
			return sb_error_set(err, EFBIG, "base '%s' is larger than %llu bytes",
			    d->old_file.path, (unsigned long long)SB_GIT_FILE_MAX);
		git_error_clear();
	}
	return 0;
}

static void
files_free(struct sb_git_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i].path);
	free(files);
}

/* The growing result of a capture, released as a whole on failure. */
struct capture_files {
	struct sb_git_file *v;
	size_t n;
};

static void
capture_files_release(struct capture_files *f)
{
	files_free(f->v, f->n);
	f->v = NULL;
	f->n = 0;
}

/* Print delta i of diff into out and add its /files entry. */
static int
capture_delta(struct sb_git_baseline *b, git_diff *diff, size_t i, struct sb_buf *out,
    struct capture_files *files, struct sb_error **err)
{
	_cleanup_(git_patch_freep) git_patch *patch = NULL;
	const git_diff_delta *d = git_diff_get_delta(diff, i);
	struct print_state ps = { .out = out, .no_hunks = false, .full = false };
	struct sb_git_file *f;
	enum sb_git_status status;
	size_t adds = 0, dels = 0, off;
	const char *path;
	int r;

	if (d == NULL || !delta_status(d->status, &status))
		return 0;
	path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
	if (check_sizes(b, d, err) < 0)
		return -1;
	r = git_patch_from_diff(&patch, diff, i);
	if (r < 0)
		return git_fail(err, r, "diff '%s'", path);
	if (patch == NULL)
		return 0;
	/* Binary-ness is only known once the patch has been generated. */
	d = git_patch_get_delta(patch);
	ps.no_hunks = (d->flags & GIT_DIFF_FLAG_BINARY) == 0 && git_patch_num_hunks(patch) == 0;
	off = out->len;
	r = git_patch_print(patch, capture_print, &ps);
	if (ps.full)
		return sb_error_set(err, EFBIG, "diff is larger than %zu bytes", out->max);
	if (r < 0)
		return git_fail(err, r, "print the diff of '%s'", path);

	if ((d->flags & GIT_DIFF_FLAG_BINARY) == 0) {
		r = git_patch_line_stats(NULL, &adds, &dels, patch);
		if (r < 0)
			return git_fail(err, r, "count the lines of '%s'", path);
	}
	files->v = sb_xreallocarray(files->v, files->n + 1, sizeof(*files->v));
	f = &files->v[files->n++];
	f->path = sb_xstrdup(path);
	f->status = status;
	f->additions = adds;
	f->deletions = dels;
	f->binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
	f->diff_off = off;
	f->diff_len = out->len - off;
	return 0;
}

int
sb_git_capture(struct sb_git_baseline *b, size_t max_diff_bytes, struct sb_git_capture *ret,
    struct sb_error **err)
{
	_cleanup_(git_diff_freep) git_diff *diff = NULL;
	_cleanup_(capture_files_release) struct capture_files files = { NULL, 0 };
	_cleanup_buf_ struct sb_buf out = SB_BUF_INIT(max_diff_bytes);
	_cleanup_(diff_state_release) struct diff_state st = { 0 };
	git_diff_options opts;
	size_t n;
	int r;

	r = git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	if (r < 0)
		return git_fail(err, r, "diff options");

	/*
	 * Every file section is at least 51 bytes ("diff --git a/x b/x\nold mode ...\nnew mode
	 * ...\n"), so more deltas than max/32 cannot fit: stop building the list early instead
	 * of holding a million deltas in memory for a diff that will be refused anyway.
	 */
	st.max_deltas = max_diff_bytes / 32;
	if (st.max_deltas > SB_GIT_CHANGED_FILES_MAX)
		st.max_deltas = SB_GIT_CHANGED_FILES_MAX;

	/*
	 * Untracked files with their content, recursing into untracked directories but not into
	 * nested repositories (FAST_UNTRACKED reports those as one directory entry, which
	 * diff_notify drops), unreadable entries reported (so they fail the capture instead of
	 * vanishing), binary patches, submodules not looked into, and the stat cache refreshed.
	 * Prefixes and context are set here so that no configuration (diff.noprefix,
	 * diff.context, diff.mnemonicPrefix) can change them.
	 */
	opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
		     GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_ENABLE_FAST_UNTRACKED_DIRS |
		     GIT_DIFF_INCLUDE_UNREADABLE | GIT_DIFF_IGNORE_SUBMODULES |
		     GIT_DIFF_SHOW_BINARY | GIT_DIFF_UPDATE_INDEX;
	opts.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
	opts.context_lines = 3;
	opts.interhunk_lines = 0;
	opts.old_prefix = "a/";
	opts.new_prefix = "b/";
	if (run_diff(b, &opts, &st, &diff, err) < 0)
		return -1;

	n = git_diff_num_deltas(diff);
	for (size_t i = 0; i < n; i++)
		if (capture_delta(b, diff, i, &out, &files, err) < 0)
			return -1;

	ret->diff = sb_buf_detach(&out, &ret->diff_len);
	ret->files = TAKE_PTR(files.v);
	ret->nfiles = files.n;
	files.n = 0;
	return 0;
}

void
sb_git_capture_release(struct sb_git_capture *c)
{
	if (c == NULL)
		return;
	free(c->diff);
	files_free(c->files, c->nfiles);
	c->diff = NULL;
	c->diff_len = 0;
	c->files = NULL;
	c->nfiles = 0;
}

/*
 * Append one commit's entry to out, or as much as fits; returns false once the log is full
 * (the caller then marks the cut).
 */
static bool
log_append(struct sb_buf *out, const git_oid *id, git_commit *c)
{
	char hex[GIT_OID_HEXSZ + 1];
	const char *subject = git_commit_summary(c);
	const char *body = git_commit_body(c);
	size_t dropped = 0;

	git_oid_tostr(hex, sizeof(hex), id);
	dropped += sb_buf_append_capped(out, hex, strlen(hex));
	dropped += sb_buf_append_capped(out, "\n", 1);
	dropped += sb_buf_append_capped(out, subject ? subject : "", subject ? strlen(subject) : 0);
	dropped += sb_buf_append_capped(out, "\n", 1);
	dropped += sb_buf_append_capped(out, body ? body : "", body ? strlen(body) : 0);
	dropped += sb_buf_append_capped(out, "\n---\n", 5);
	return dropped == 0;
}

/* The log itself; returns false when the repository is missing, broken or unrelated. */
static bool
commits_log_build(struct sb_git_baseline *b, struct sb_buf *out)
{
	_cleanup_(git_repository_freep) git_repository *repo = NULL;
	_cleanup_(git_revwalk_freep) git_revwalk *walk = NULL;
	git_oid head, id;
	int r;

	if (open_agent_repo(b->worktree, &repo, &head, NULL) < 0)
		return false;
	if (git_oid_equal(&head, &b->base))
		return true;
	/* 1: descends; 0: does not; < 0: the base is not even in that repository. */
	if (git_graph_descendant_of(repo, &head, &b->base) != 1)
		return false;
	/* Newest first, children always before their parents (git log --topo-order). */
	if (git_revwalk_new(&walk, repo) < 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME) < 0 ||
	    git_revwalk_push(walk, &head) < 0 || git_revwalk_hide(walk, &b->base) < 0)
		return false;
	while ((r = git_revwalk_next(&id, walk)) == 0) {
		_cleanup_(git_commit_freep) git_commit *c = NULL;

		if (git_commit_lookup(&c, repo, &id) < 0)
			return false;
		if (!log_append(out, &id, c)) {
			/* Full: cut so that the "...\n" marker ends exactly at the maximum. */
			out->len = out->max - 4;
			out->s[out->len] = '\0';
			(void)sb_buf_append(out, "...\n", 4, NULL);
			return true;
		}
	}
	return r == GIT_ITEROVER;
}

int
sb_git_commits_log(struct sb_git_baseline *b, size_t max, char **ret, struct sb_error **err)
{
	_cleanup_buf_ struct sb_buf out = SB_BUF_INIT(max);

	if (max < 4)
		return sb_error_set(err, EINVAL, "commits log maximum %zu is below 4 bytes", max);
	if (!commits_log_build(b, &out)) {
		/* Missing, broken or unrelated repository: no commits to report. */
		git_error_clear();
		sb_buf_reset(&out);
	}
	*ret = sb_buf_detach(&out, NULL);
	return 0;
}

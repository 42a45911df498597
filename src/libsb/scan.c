/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scan.c: the answer-seeking scan (see scan.h). The rules look at what a command names, not
 * at what it printed: a tool's result may quote a URL or a path without the agent having
 * asked for it. A command is cut into segments at shell separators and each segment into
 * words, so `git log --all` is found however the options are ordered, and `nc` is a word, not
 * the middle of `func`.
 */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "sb/mem.h"
#include "sb/scan.h"

#define ARGS_DEPTH_MAX	16    /* nesting of a tool's arguments walked */
#define ARGS_STRINGS_MAX 256  /* strings of one tool call scanned */
#define WORDS_MAX	64    /* words of one segment looked at */

void
sb_scan_init(struct sb_scan *s)
{
	s->flags = json_array();
	s->total = 0;
}

void
sb_scan_release(struct sb_scan *s)
{
	json_decref(s->flags);
	s->flags = NULL;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t
utf8_len(const unsigned char *p, size_t n)
{
	size_t want;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		want = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		want = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		want = 4;
	else
		return 0;
	if (want > n)
		return 0;
	for (size_t i = 1; i < want; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return want;
}

/*
 * The evidence: up to SB_SCAN_EXCERPT bytes of s around pos, as valid UTF-8 with every
 * control byte and every byte of a broken sequence shown as '?' (the text is the agent's).
 */
static json_t *
excerpt_of(const char *s, size_t len, size_t pos)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t start = pos > SB_SCAN_EXCERPT / 3 ? pos - SB_SCAN_EXCERPT / 3 : 0;
	size_t end = start + SB_SCAN_EXCERPT < len ? start + SB_SCAN_EXCERPT : len;
	char out[SB_SCAN_EXCERPT * 4 + 1];
	size_t o = 0;

	while (start > 0 && start < len && (u[start] & 0xc0) == 0x80)
		start--;
	for (size_t i = start; i < end;) {
		size_t n = utf8_len(u + i, len - i);

		if (n == 0 || (n == 1 && (u[i] < 0x20 || u[i] == 0x7f))) {
			out[o++] = u[i] == '\n' || u[i] == '\t' ? ' ' : '?';
			i++;
			continue;
		}
		if (i + n > end)
			break;
		memcpy(out + o, u + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	return json_string(out);
}

/* Add a flag unless this source and seq already have one of this kind. */
static void
add_flag(struct sb_scan *s, const char *kind, const char *source, long long seq,
    const char *match, json_t *excerpt)
{
	const json_t *f;
	size_t i;

	json_array_foreach (s->flags, i, f)
		if (seq >= 0 && json_integer_value(json_object_get(f, "seq")) == seq &&
		    strcmp(json_string_value(json_object_get(f, "kind")), kind) == 0 &&
		    strcmp(json_string_value(json_object_get(f, "source")), source) == 0) {
			json_decref(excerpt);
			return;
		}
	s->total++;
	if (json_array_size(s->flags) >= SB_SCAN_FLAGS_MAX) {
		json_decref(excerpt);
		return;
	}
	json_array_append_new(s->flags,
	    json_pack("{s:s, s:s, s:o, s:s, s:o}", "kind", kind, "source", source, "seq",
		seq >= 0 ? json_integer(seq) : json_null(), "match", match, "excerpt",
		excerpt != NULL ? excerpt : json_string("")));
}

/* memmem, case-insensitive on ASCII (needle already lower case). */
static const char *
find_ci(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	if (n == 0 || n > len)
		return NULL;
	for (size_t i = 0; i + n <= len; i++) {
		size_t j = 0;

		while (j < n && tolower((unsigned char)hay[i + j]) == needle[j])
			j++;
		if (j == n)
			return hay + i;
	}
	return NULL;
}

static char *
lower_dup(const char *s, size_t len)
{
	char *d = sb_xmalloc(len + 1);

	for (size_t i = 0; i < len; i++)
		d[i] = s[i] == '\0' ? ' ' : (char)tolower((unsigned char)s[i]);
	d[len] = '\0';
	return d;
}

/* A byte that ends a path or a word in a command line. */
static bool
is_sep(char c)
{
	return c == '\0' || strchr(" \t\r\n'\"=(:<>;|&`,[]{}$", c) != NULL;
}

/* The hidden directory named as a path: at a word's start, followed by its end or a '/'. */
static const char *
find_hidden(const char *low, size_t len, const char *dir)
{
	size_t n = strlen(dir);

	for (const char *p = low; n > 0 && (p = find_ci(p, len - (size_t)(p - low), dir)) != NULL;
	     p++) {
		char after = (size_t)(p - low) + n < len ? p[n] : '\0';

		if ((p == low || is_sep(p[-1])) && (after == '/' || is_sep(after)))
			return p;
	}
	return NULL;
}

/* A URL as text to look for: lower case, without its scheme, "www.", a trailing slash or
 * ".git"; NULL when what is left is too short to mean anything. */
static char *
url_key(const char *url)
{
	char *k;
	size_t n;

	if (url == NULL)
		return NULL;
	if (strncasecmp(url, "https://", 8) == 0)
		url += 8;
	else if (strncasecmp(url, "http://", 7) == 0)
		url += 7;
	if (strncasecmp(url, "www.", 4) == 0)
		url += 4;
	k = lower_dup(url, strlen(url));
	n = strlen(k);
	while (n > 0 && k[n - 1] == '/')
		k[--n] = '\0';
	if (n > 4 && strcmp(k + n - 4, ".git") == 0)
		k[n -= 4] = '\0';
	if (n < 8) {
		free(k);
		return NULL;
	}
	return k;
}

static bool
in_list(const char *w, const char *const *list)
{
	for (size_t i = 0; list[i] != NULL; i++)
		if (strcmp(w, list[i]) == 0)
			return true;
	return false;
}

static const char *const net_tools[] = { "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh",
	"scp", "sftp", "telnet", "ftp", "lynx", "w3m", "links", "aria2c", "rsync", NULL };
static const char *const git_net[] = { "clone", "fetch", "pull", "ls-remote", "remote",
	"submodule", NULL };
static const char *const git_dig[] = { "reflog", "fsck", "rev-list", "cat-file",
	"count-objects", "verify-pack", "unpack-objects", "stash", "show-ref", "for-each-ref",
	"lost-found", NULL };
static const char *const git_logs[] = { "log", "shortlog", "whatchanged", "show", NULL };
static const char *const git_all[] = { "--all", "--reflog", "-g", "--walk-reflogs",
	"--branches", "--remotes", "--tags", "--glob", NULL };
static const char *const proc_tools[] = { "ps", "pgrep", "pstree", "top", "htop", "lsof",
	"strace", "ltrace", "pidof", "nsenter", "fuser", NULL };
static const char *const net_text[] = { "/dev/tcp/", "/dev/udp/", "http://", "https://",
	"ftp://", "urllib", "requests.get", "http.client", "socket.socket", "net.connect",
	"fetch(", NULL };
static const char *const git_text[] = { ".git/objects", ".git/logs", ".git/packed-refs",
	".git/refs", ".git/orig_head", ".git/fetch_head", NULL };

/* The words of one segment (lower case, quotes and a path's directories dropped). */
static size_t
segment_words(char *seg, char **w, size_t max)
{
	size_t n = 0;
	char *next = seg;

	while (n < max) {
		char *tok, *slash;
		size_t l;

		next += strspn(next, " \t\r\n");
		if (*next == '\0')
			break;
		tok = next;
		next += strcspn(next, " \t\r\n");
		if (*next != '\0')
			*next++ = '\0';

		while (*tok == '\'' || *tok == '"' || *tok == '\\')
			tok++;
		l = strlen(tok);
		while (l > 0 && (tok[l - 1] == '\'' || tok[l - 1] == '"'))
			tok[--l] = '\0';
		/* /usr/bin/curl is curl; an option or a path argument keeps its slashes. */
		slash = strrchr(tok, '/');
		if (slash != NULL && tok[0] == '/' && slash[1] != '\0' && n == 0)
			tok = slash + 1;
		if (*tok != '\0')
			w[n++] = tok;
	}
	return n;
}

/* Whether the words hold a command word (the first, or one after sudo/env/timeout...). */
static const char *
command_in(char **w, size_t n, const char *const *tools)
{
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(w[i], '/') != NULL ? strrchr(w[i], '/') + 1 : w[i];

		if (in_list(b, tools))
			return b;
	}
	return NULL;
}

/* The kinds the words of one segment show. */
static void
scan_segment(char **w, size_t n, const char **net, const char **dig, const char **proc)
{
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(w[i], '/') != NULL ? strrchr(w[i], '/') + 1 : w[i];

		if (strcmp(b, "git") != 0)
			continue;
		for (size_t j = i + 1; j < n; j++) {
			if (*net == NULL && in_list(w[j], git_net))
				*net = "git (network)";
			if (*dig == NULL && in_list(w[j], git_dig))
				*dig = "git (history)";
			if (*dig == NULL && in_list(w[j], git_logs))
				for (size_t k = j + 1; k < n; k++)
					if (in_list(w[k], git_all) || strncmp(w[k], "--glob=", 7) == 0)
						*dig = "git log of every ref";
		}
		break;
	}
	if (*net == NULL)
		*net = command_in(w, n, net_tools);
	if (*proc == NULL)
		*proc = command_in(w, n, proc_tools);
	if (*proc == NULL)
		for (size_t i = 0; i < n && *proc == NULL; i++)
			if ((strcmp(w[i], "gdb") == 0 || strcmp(w[i], "ptrace") == 0) && i + 1 < n &&
			    (strcmp(w[i + 1], "-p") == 0 || strcmp(w[i + 1], "attach") == 0))
				*proc = "gdb -p";
}

/* /proc/<pid>, /proc/<glob>, /proc/[...: another process's files (/proc/self is one's own). */
static const char *
find_proc(const char *low, size_t len)
{
	for (const char *p = low; (p = find_ci(p, len - (size_t)(p - low), "/proc/")) != NULL; p++) {
		char c = (size_t)(p - low) + 6 < len ? p[6] : '\0';

		if (isdigit((unsigned char)c) || c == '*' || c == '[' || c == '$' || c == '{')
			return p;
	}
	return NULL;
}

/* Where the evidence is: the match's own text (or its first word), else the start. */
static size_t
pos_of(const char *low, size_t len, const char *match)
{
	char word[32];
	const char *p;
	size_t n = strcspn(match, " <");

	if (n >= sizeof(word))
		n = sizeof(word) - 1;
	memcpy(word, match, n);
	word[n] = '\0';
	if (strncmp(match, "/proc/<", 7) == 0)
		n = (size_t)snprintf(word, sizeof(word), "/proc/");
	p = find_ci(low, len, word);
	return p != NULL ? (size_t)(p - low) : 0;
}

void
sb_scan_command(struct sb_scan *s, const struct sb_scan_task *t, const char *source,
    long long seq, const char *cmd, size_t len)
{
	_cleanup_free_ char *low = lower_dup(cmd, len), *work = sb_xstrdup(low);
	const char *net = NULL, *dig = NULL, *proc = NULL, *p;
	char *seg;

	if (t->hidden_dir != NULL && (p = find_hidden(low, len, t->hidden_dir)) != NULL)
		add_flag(s, "hidden_path", source, seq, t->hidden_dir,
		    excerpt_of(cmd, len, (size_t)(p - low)));
	/* The project, the advisory, the fix: by URL or by the fix's commit id. */
	{
		const char *hit = NULL, *at = NULL;
		_cleanup_free_ char *repo = url_key(t->repository);
		char commit[SB_SCAN_MIN_COMMIT + 1];

		if (repo != NULL && (at = find_ci(low, len, repo)) != NULL)
			hit = t->repository;
		for (size_t i = 0; hit == NULL && t->references != NULL && t->references[i]; i++) {
			_cleanup_free_ char *k = url_key(t->references[i]);

			if (k != NULL && (at = find_ci(low, len, k)) != NULL)
				hit = t->references[i];
		}
		if (hit == NULL && t->patch_commit != NULL &&
		    strlen(t->patch_commit) >= SB_SCAN_MIN_COMMIT) {
			for (size_t i = 0; i < SB_SCAN_MIN_COMMIT; i++)
				commit[i] = (char)tolower((unsigned char)t->patch_commit[i]);
			commit[SB_SCAN_MIN_COMMIT] = '\0';
			if ((at = find_ci(low, len, commit)) != NULL)
				hit = "the fix's commit id";
		}
		if (hit != NULL)
			add_flag(s, "answer_reference", source, seq, hit,
			    excerpt_of(cmd, len, (size_t)(at - low)));
	}
	for (size_t i = 0; net_text[i] != NULL && net == NULL; i++)
		if (find_ci(low, len, net_text[i]) != NULL)
			net = net_text[i];
	for (size_t i = 0; git_text[i] != NULL && dig == NULL; i++)
		if (find_ci(low, len, git_text[i]) != NULL)
			dig = git_text[i];
	if (find_proc(low, len) != NULL)
		proc = "/proc/<pid>";
	for (seg = work; *seg != '\0';) {
		char *w[WORDS_MAX];
		size_t l = strcspn(seg, ";|&()`\n"), n;
		bool last = seg[l] == '\0';

		seg[l] = '\0';
		n = segment_words(seg, w, WORDS_MAX);
		scan_segment(w, n, &net, &dig, &proc);
		seg += l + (last ? 0 : 1);
	}
	if (net != NULL)
		add_flag(s, "network", source, seq, net, excerpt_of(cmd, len, pos_of(low, len, net)));
	if (dig != NULL)
		add_flag(s, "git_history", source, seq, dig, excerpt_of(cmd, len, pos_of(low, len, dig)));
	if (proc != NULL)
		add_flag(s, "proc_snoop", source, seq, proc, excerpt_of(cmd, len, pos_of(low, len, proc)));
}

/* Every string below v (a tool's arguments), bounded in depth and number. */
static void
scan_strings(struct sb_scan *s, const struct sb_scan_task *t, long long seq, const json_t *v,
    unsigned depth, unsigned *budget)
{
	const char *k;
	const json_t *m;
	size_t i;

	if (depth > ARGS_DEPTH_MAX || *budget == 0)
		return;
	if (json_is_string(v)) {
		(*budget)--;
		sb_scan_command(s, t, "dialog", seq, json_string_value(v), json_string_length(v));
	} else if (json_is_array(v)) {
		json_array_foreach (v, i, m)
			scan_strings(s, t, seq, m, depth + 1, budget);
	} else if (json_is_object(v)) {
		json_object_foreach ((json_t *)v, k, m)
			scan_strings(s, t, seq, m, depth + 1, budget);
	}
}

/* Tools that reach the web by themselves (Claude Code's, Codex's, OpenCode's). */
static const char *const web_tools[] = { "webfetch", "websearch", "web_search", "web_fetch",
	"fetch", NULL };

static void
scan_canary_at(struct sb_scan *s, const struct sb_scan_task *t, const char *source, long long seq,
    const char *text, size_t len)
{
	const char *p;

	if (t->canary == NULL || strlen(t->canary) < 8 || len < strlen(t->canary))
		return;
	p = memmem(text, len, t->canary, strlen(t->canary));
	if (p != NULL)
		add_flag(s, "canary", source, seq, "the dataset's canary",
		    excerpt_of(text, len, (size_t)(p - text)));
}

void
sb_scan_dialog(struct sb_scan *s, const struct sb_scan_task *t, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl != NULL ? (size_t)(nl - (text + off)) : len - off;
		json_t *e = json_loadb(text + off, n, JSON_REJECT_DUPLICATES, NULL);
		long long seq = -1;

		if (json_is_object(e)) {
			const json_t *args = json_object_get(e, "args");
			const char *type = json_string_value(json_object_get(e, "type"));

			if (json_is_integer(json_object_get(e, "seq")) &&
			    json_integer_value(json_object_get(e, "seq")) >= 0)
				seq = json_integer_value(json_object_get(e, "seq"));
			if (type != NULL && strcmp(type, "tool") == 0) {
				const char *name = json_string_value(json_object_get(e, "name"));
				unsigned budget = ARGS_STRINGS_MAX;

				if (args != NULL)
					scan_strings(s, t, seq, args, 0, &budget);
				if (name != NULL) {
					_cleanup_free_ char *ln = lower_dup(name, strlen(name));

					if (in_list(ln, web_tools))
						add_flag(s, "network", "dialog", seq, "a web tool",
						    excerpt_of(name, strlen(name), 0));
				}
			}
		}
		json_decref(e);
		/* The canary anywhere in the line: a message, a result, a name. */
		scan_canary_at(s, t, "dialog", seq, text + off, n);
		off += n + 1;
	}
}

/* The line's leading time ("2026-12-03T17:06:09.737Z"), if it has one, is before since. */
static bool
stamped_before(const char *line, size_t n, const char *since)
{
	size_t k = since != NULL ? strlen(since) : 0;

	if (k == 0 || n <= k || line[k] != ' ' || line[4] != '-' || line[10] != 'T')
		return false;
	return memcmp(line, since, k) < 0;
}

void
sb_scan_daemon_log(struct sb_scan *s, const char *text, size_t len, const char *since)
{
	size_t off = 0;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl != NULL ? (size_t)(nl - (text + off)) : len - off;
		const char *line = text + off;

		if (stamped_before(line, n, since)) {
			off += n + 1;
			continue;
		}

		/* helper.c logs each refusal as "agent <request>: <status> <why> (refusal N)". */
		if (memmem(line, n, " agent ", 7) != NULL && memmem(line, n, "(refusal ", 9) != NULL)
			add_flag(s, "refused", "daemon.log", -1, "a request the daemon refused",
			    excerpt_of(line, n, 0));
		off += n + 1;
	}
}

void
sb_scan_canary(struct sb_scan *s, const struct sb_scan_task *t, const char *source,
    const char *text, size_t len)
{
	scan_canary_at(s, t, source, -1, text, len);
}

void
sb_scan_unscanned(struct sb_scan *s, const char *source, const char *why)
{
	add_flag(s, "unscanned", source, -1, why, NULL);
}

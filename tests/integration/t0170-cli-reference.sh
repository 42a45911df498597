#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The CLI's reference cannot drift from the CLI: docs/cli.md's reference part, the man pages
# and the completions are what scripts/cli-reference makes from this binary's help, the man
# pages pass groff's warnings, and the bash completion completes. docs/cli.md (Conventions).
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

plan_lazy

gen="$SB_SRCDIR/scripts/cli-reference"

# docs/cli.md: everything after the reference marker is the generated markdown.
want=$("$gen" "$SSEBENCH" markdown) || bail "scripts/cli-reference markdown failed"
have=$(sed -n '/^<!-- Made by scripts\/cli-reference/,$p' "$SB_SRCDIR/docs/cli.md" | tail -n +3)
is "$have" "$want" "docs/cli.md's reference is the binary's help (run: make cli-reference)"

# Every command the help lists has its section, and every section a command.
cmds=$(printf '%s\n' "$want" | grep -c '^### ')
ok "$([ "$cmds" -ge 30 ]; echo $?)" "the reference covers every command ($cmds sections)"

# The man pages: the same text, one page per top-level command, clean under groff -ww.
mkdir -p "$SB_TMP/man"
"$gen" "$SSEBENCH" man "$SB_TMP/man" || bail "scripts/cli-reference man failed"
run_cmd r diff -r "$SB_SRCDIR/man" "$SB_TMP/man"
is "$r_rc:$r_out" "0:" "man/ is what the binary's help makes (run: make cli-reference)"
# make install installs what Makefile.am lists: every page must be there.
for p in "$SB_TMP"/man/*.1; do
	grep -q "man/$(basename "$p")" "$SB_SRCDIR/Makefile.am" ||
		{ ok 1 "Makefile.am's dist_man1_MANS lists $(basename "$p")"; continue; }
done
ok 0 "Makefile.am's dist_man1_MANS lists every page"
if command -v groff >/dev/null; then
	for p in "$SB_SRCDIR"/man/*.1; do
		run_cmd r groff -ww -man -z "$p"
		is "$r_rc:$r_err" "0:" "groff -ww: $(basename "$p") has no warning"
	done
else
	skip "groff is not installed: the man pages' syntax is not checked"
fi

# The completions.
for shell in bash zsh; do
	f=$([ "$shell" = bash ] && echo ssebench || echo _ssebench)
	is "$("$gen" "$SSEBENCH" "$shell")" "$(cat "$SB_SRCDIR/completion/$f")" \
		"completion/$f is what the binary's help makes (run: make cli-reference)"
done
complete_words() { # WORD...: what bash completion offers for the last word
	(
		# shellcheck disable=SC1091
		. "$SB_SRCDIR/completion/ssebench"
		COMP_WORDS=(ssebench "$@")
		COMP_CWORD=$#
		_ssebench
		printf '%s\n' "${COMPREPLY[@]}"
	)
}
is "$(complete_words runs ex)" "exec" "bash completion: a subcommand"
like "$(complete_words run --ta)" '^--task$' "bash completion: a flag of a command"
like "$(complete_words dataset verify --)" '--update-baseline' "bash completion: a flag of a subcommand"
if command -v zsh >/dev/null; then
	run_cmd r zsh -n "$SB_SRCDIR/completion/_ssebench"
	is "$r_rc" 0 "zsh -n: the zsh completion parses"
fi

done_testing

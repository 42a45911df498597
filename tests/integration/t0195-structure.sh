#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The shape the layers below the CLI keep (docs/design.md, "Code layout"):
#  - no function in daemon/, entrypoint/, evaluator/, mcp/ or src/libsb is longer than 80
#    lines unless the comment above it gives the reason, starting "Long because" (an ordered
#    privilege drop, a child between fork and exec: a sequence whose order is the property);
#  - no two files of one of those directories call into each other, directly or round a
#    longer circle: read from the built objects' symbol tables (nm), so a call through a
#    header counts and a name in a comment does not.
# Both checks first prove on a planted case that they can fail.
. "${SB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

src=$SB_SRCDIR
build=$SB_BUILDDIR
dirs="daemon entrypoint evaluator mcp src/libsb"
limit=80
plan_lazy

command -v nm >/dev/null 2>&1 || bail "nm (binutils) is needed"

# long_functions FILE...: "FILE:LINE NAME LENGTH" for every function whose body (from the
# "{" in column 0 to the "}" in column 0) is over $limit lines with no "Long because" in the
# comment between the previous function's end and its body.
long_functions() {
	awk -v limit="$limit" '
		FNR == 1 { inbody = 0; why = 0 }
		!inbody && /Long because/ { why = 1 }
		!inbody && /^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0 }
		/^\{/ && !inbody { start = FNR; name = sig; inbody = 1; next }
		/^\}/ && inbody {
			inbody = 0
			if (FNR - start + 1 > limit && !why) {
				sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
				printf "%s:%d %s %d\n", FILENAME, start, name, FNR - start + 1
			}
			why = 0
		}' "$@"
}

# circles DIR PREFIX: "a <-> b" for every two files of DIR whose objects (PREFIXname.o in
# the build tree, for the sources DIR/name.c that exist) reach each other through the
# functions and data they define and use.
circles() {
	local d=$1 pre=$2 o f
	for o in "$build/$d/$pre"*.o; do
		[ -e "$o" ] || continue
		f=${o##*/}
		f=${f#"$pre"}
		f=${f%.o}
		[ -f "$src/$d/$f.c" ] || continue
		nm "$o" | awk -v f="$f" '$1 == "U" { print "U", f, $2 } $2 ~ /^[TDBR]$/ { print "D", f, $3 }'
	done | awk '
		$1 == "D" { def[$3] = $2; files[$2] = 1 }
		$1 == "U" { use[$2 " " $3] = 1 }
		END {
			for (k in use) {
				split(k, a, " ")
				if ((a[2] in def) && def[a[2]] != a[1])
					edge[a[1] SUBSEP def[a[2]]] = 1
			}
			n = 0
			for (f in files)
				node[n++] = f
			for (i = 0; i < n; i++)
				for (j = 0; j < n; j++)
					r[i, j] = ((node[i] SUBSEP node[j]) in edge)
			for (k = 0; k < n; k++)
				for (i = 0; i < n; i++)
					if (r[i, k])
						for (j = 0; j < n; j++)
							if (r[k, j])
								r[i, j] = 1
			for (i = 0; i < n; i++)
				for (j = i + 1; j < n; j++)
					if (r[i, j] && r[j, i])
						print (node[i] < node[j] ? node[i] " <-> " node[j] \
						    : node[j] " <-> " node[i])
		}' | sort
}

# The planted cases: a 90-line function, the same with its reason, and three files calling
# round a circle (a -> b -> c -> a).
mkdir -p "$SB_TMP/plant/x"
{
	printf 'static int\nlong_one(void)\n{\n'
	for i in $(seq 90); do printf '\t(void)%d;\n' "$i"; done
	printf '\treturn 0;\n}\n\n'
	printf '/* Long because the order is the property. */\nstatic int\nlong_two(void)\n{\n'
	for i in $(seq 90); do printf '\t(void)%d;\n' "$i"; done
	printf '\treturn 0;\n}\n'
} >"$SB_TMP/plant/long.c"
got=$(long_functions "$SB_TMP/plant/long.c")
like "$got" 'long\.c:3 long_one 9[0-9]' "the length check finds a planted 90-line function"
unlike "$got" 'long_two' "and takes a reason given as 'Long because'"

printf 'int b(void);\nint a(void) { return b(); }\n' >"$SB_TMP/plant/x/a.c"
printf 'int c(void);\nint b(void) { return c(); }\n' >"$SB_TMP/plant/x/b.c"
printf 'int a(void);\nint c(void) { return a(); }\n' >"$SB_TMP/plant/x/c.c"
printf 'int a(void);\nint d(void) { return a(); }\n' >"$SB_TMP/plant/x/d.c"
for f in a b c d; do
	${CC:-cc} -c -o "$SB_TMP/plant/x/p-$f.o" "$SB_TMP/plant/x/$f.c" || bail "cannot compile the planted circle"
done
got=$(src=$SB_TMP/plant build=$SB_TMP/plant circles x p-)
is "$got" "$(printf 'a <-> b\na <-> c\nb <-> c')" "the circle check finds a planted three-file circle, and not a one-way call"

# The tree.
for d in $dirs; do
	# shellcheck disable=SC2046 # file names of the tree, no blanks
	got=$(cd "$src" && long_functions $(ls "$d"/*.c))
	is "$got" "" "$d: no function over $limit lines without a 'Long because' reason"
done

for d in daemon:ssebench_daemon- entrypoint:ssebench_entrypoint- evaluator:ssebench_evaluator- \
	mcp:ssebench_mcp- src/libsb:; do
	dir=${d%%:*} pre=${d#*:}
	n=$(find "$build/$dir" -maxdepth 1 -name "$pre*.o" 2>/dev/null | wc -l)
	[ "$n" -gt 0 ] || bail "no objects for $dir in $build: build first"
	is "$(circles "$dir" "$pre")" "" "$dir: no two files call into each other ($n objects)"
done

done_testing

# SPDX-License-Identifier: Apache-2.0
# SB_ADD_CFLAGS_IF_SUPPORTED(VAR, FLAGS...): append each flag in FLAGS that the C compiler
# accepts (with -Werror, so a flag the compiler only warns about is not taken) to VAR.
AC_DEFUN([SB_ADD_CFLAGS_IF_SUPPORTED], [
	for sb_flag in $2; do
		AC_MSG_CHECKING([whether $CC accepts $sb_flag])
		sb_save_CFLAGS=$CFLAGS
		CFLAGS="$CFLAGS -Werror $sb_flag"
		AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
			[AC_MSG_RESULT([yes]); $1="$$1 $sb_flag"],
			[AC_MSG_RESULT([no])])
		CFLAGS=$sb_save_CFLAGS
	done
])

# SB_ADD_LDFLAGS_IF_SUPPORTED(VAR, FLAGS...): the same for linker flags.
AC_DEFUN([SB_ADD_LDFLAGS_IF_SUPPORTED], [
	for sb_flag in $2; do
		AC_MSG_CHECKING([whether the linker accepts $sb_flag])
		sb_save_LDFLAGS=$LDFLAGS
		LDFLAGS="$LDFLAGS -Werror $sb_flag"
		AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
			[AC_MSG_RESULT([yes]); $1="$$1 $sb_flag"],
			[AC_MSG_RESULT([no])])
		LDFLAGS=$sb_save_LDFLAGS
	done
])

# SB_REQUIRE_PKG(PREFIX, MODULE, DEBIAN_PACKAGE): PKG_CHECK_MODULES with a hard error that
# names the Debian package providing MODULE.
AC_DEFUN([SB_REQUIRE_PKG], [
	PKG_CHECK_MODULES([$1], [$2], [],
		[AC_MSG_ERROR([$2 not found by pkg-config; on Debian: apt-get install $3])])
])

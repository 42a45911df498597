/* SPDX-License-Identifier: Apache-2.0 */
/*
 * banned.h: functions that must not be used in ssebench (docs/design.md, "Banned functions").
 *
 * Each one is redefined to an identifier that does not exist, so a call fails to compile
 * (configure adds -Werror=implicit-function-declaration) with the reason in the name.
 * Included last by common.h, after every system header, so the headers' own declarations
 * are untouched. The reasons:
 *   strcpy, strcat, strncpy, sprintf, vsprintf, gets: no bound, or a bound that does not
 *     terminate; use sb_buf, snprintf, sb_xasprintf;
 *   strtok: hidden state, not reentrant; use strtok_r or a parser;
 *   atoi, atol, atoll: no error reporting; use sb_parse_u64 and friends;
 *   system, popen: a shell parses the command; use sb_cmd with an argv vector;
 *   mktemp, tmpnam, tempnam: race between naming and creating; use mkstemp/O_TMPFILE;
 *   dup: the copy is not close-on-exec; use fcntl(fd, F_DUPFD_CLOEXEC, 3);
 *   getenv (only where SB_BAN_GETENV is defined: the setuid-like daemon and entrypoint):
 *     use secure_getenv.
 */
#ifndef SB_BANNED_H
#define SB_BANNED_H

#define SB_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(...) SB_BANNED(strcpy)
#undef strcat
#define strcat(...) SB_BANNED(strcat)
#undef strncpy
#define strncpy(...) SB_BANNED(strncpy)
#undef sprintf
#define sprintf(...) SB_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) SB_BANNED(vsprintf)
#undef gets
#define gets(...) SB_BANNED(gets)
#undef strtok
#define strtok(...) SB_BANNED(strtok)
#undef atoi
#define atoi(...) SB_BANNED(atoi)
#undef atol
#define atol(...) SB_BANNED(atol)
#undef atoll
#define atoll(...) SB_BANNED(atoll)
#undef system
#define system(...) SB_BANNED(system)
#undef popen
#define popen(...) SB_BANNED(popen)
#undef mktemp
#define mktemp(...) SB_BANNED(mktemp)
#undef tmpnam
#define tmpnam(...) SB_BANNED(tmpnam)
#undef tempnam
#define tempnam(...) SB_BANNED(tempnam)
#undef dup
#define dup(...) SB_BANNED(dup)

#ifdef SB_BAN_GETENV
#undef getenv
#define getenv(...) SB_BANNED(getenv)
#endif

#endif

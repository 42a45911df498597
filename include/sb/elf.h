/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elf.h: a reader of the symbol tables of ELF files and of ar archives of ELF objects.
 *
 * After the grading build the harness looks at what the build produced (objects, static
 * archives, shared objects, executables) for signs that a patch silences the sanitizer
 * oracle: a project object that defines __asan_default_options, calls
 * __sanitizer_set_report_path, or lost its AddressSanitizer instrumentation. Which names
 * matter is the caller's policy; this module only lists, for each ELF object, its symbols
 * (from .symtab and .dynsym) and its DT_NEEDED entries.
 *
 * The files were written by untrusted code. Every offset, size, count and string index is
 * checked against the file before use, work and memory are bounded by the SB_ELF_* limits
 * of limits.h, and nothing recurses on input data. The reader is fail-closed: a structure
 * it needs that is inconsistent (a table outside the file, a bad sh_link, a wrong entry
 * size, two SHT_SYMTAB sections, ...) fails the whole scan with EINVAL and says what was
 * wrong, rather than reporting a partial object a policy could mistake for a clean one.
 * Only a single symbol or DT_NEEDED entry whose name is not a usable string is left out,
 * and counted in nskipped (a linker could not resolve such a name either).
 *
 * Symbol constants (STB_*, STT_*) and e_machine values (EM_*) are those of <elf.h>.
 */
#ifndef SB_ELF_H
#define SB_ELF_H

#include <stdbool.h>
#include <stddef.h>

#include "sb/common.h"
#include "sb/error.h"

enum sb_elf_kind {
	SB_ELF_RELOCATABLE,   /* ET_REL: a .o file or an archive member */
	SB_ELF_EXECUTABLE,    /* ET_EXEC, or a PIE (ET_DYN, see sb_elf_scan_buf) */
	SB_ELF_SHARED,	      /* ET_DYN that is not a PIE */
	SB_ELF_CORE_OR_OTHER, /* ET_CORE and anything else */
};

struct sb_elf_symbol {
	const char *name;   /* NUL-terminated, never empty; valid during the callback only */
	bool defined;	    /* st_shndx != SHN_UNDEF (SHN_ABS, SHN_COMMON, SHN_XINDEX count) */
	bool dynamic;	    /* from .dynsym rather than .symtab */
	unsigned char bind; /* STB_LOCAL, STB_GLOBAL, STB_WEAK, ... */
	unsigned char type; /* STT_NOTYPE, STT_OBJECT, STT_FUNC, ... */
};

/* One ELF object: a plain file, or one member of an archive. Valid during the callback only. */
struct sb_elf_object {
	const char *member; /* archive member name (untrusted bytes, escape before printing),
			       NULL for a plain ELF file */
	enum sb_elf_kind kind;
	unsigned machine; /* e_machine */
	bool is64;	  /* ELFCLASS64 */
	bool big_endian;  /* ELFDATA2MSB */
	bool has_symtab;  /* a SHT_SYMTAB section exists (false when stripped) */
	bool has_dynsym;  /* a SHT_DYNSYM section exists */
	/* .symtab entries first, then .dynsym, in table order; the null entry and symbols
	 * with an empty name are left out; a name in both tables appears twice. NULL when
	 * nsymbols is 0. */
	const struct sb_elf_symbol *symbols;
	size_t nsymbols;
	const char *const *needed; /* DT_NEEDED names in order (NULL when nneeded is 0) */
	size_t nneeded;
	/* Symbols and DT_NEEDED entries left out because their name offset was past the string
	 * table, or the name was not NUL-terminated inside it within SB_ELF_NAME_MAX bytes. */
	size_t nskipped;
	/* A limit was hit (SB_ELF_SYMBOLS_MAX or SB_ELF_NEEDED_MAX): entries are missing. A
	 * policy that looks for the absence of a name must treat this as "could not tell". */
	bool truncated;
};

/*
 * Called once per ELF object. Return >= 0 to go on; a value < 0 stops the scan, which then
 * returns that value without touching *err (report the reason through arg).
 */
typedef int (*sb_elf_object_cb)(const struct sb_elf_object *obj, void *arg);

enum sb_elf_file_type {
	SB_ELF_FILE_NONE,	  /* neither of the below */
	SB_ELF_FILE_ELF,	  /* "\177ELF" */
	SB_ELF_FILE_ARCHIVE,	  /* "!<arch>\n" */
	SB_ELF_FILE_THIN_ARCHIVE, /* "!<thin>\n": members are other files, named by path */
};

/* What a file is, from its first len bytes of data. Never fails; no allocation. */
enum sb_elf_file_type sb_elf_sniff(const void *data, size_t len);

/*
 * Scan the whole file in data (len bytes): an ELF file (one callback, member NULL) or an
 * ar archive (System V / GNU, with GNU "//" long names and BSD "#1/len" names; one callback
 * per ELF member, in archive order). Returns the number of callbacks made (>= 0), the
 * callback's own value if it stopped the scan, or -1 with *err set:
 *   EINVAL: not ELF and not an archive; a malformed ELF file; a malformed archive (member
 *     header, size or name); a malformed ELF member (the message names the member), which
 *     fails the whole scan rather than being skipped, so a hostile build cannot hide a
 *     definition in a member the harness would not look at; a thin archive, whose members
 *     live outside the buffer (sniff first to handle those differently);
 *   EFBIG: len is above SB_ELF_FILE_MAX, or the archive has more than SB_ELF_MEMBERS_MAX
 *     members.
 * Members that are not ELF (symbol tables "/" and "/SYM64/", the "//" name table, BSD
 * __.SYMDEF, LLVM bitcode, text, nested archives) are skipped without a callback.
 * An ET_DYN object is SB_ELF_EXECUTABLE (a PIE) when DT_FLAGS_1 has DF_1_PIE, or when it
 * has a PT_INTERP segment and no DT_SONAME; otherwise SB_ELF_SHARED. Objects without a
 * section header table are reported with no symbols and no DT_NEEDED (program headers
 * are only read for PT_INTERP). data need not be aligned; it is only read.
 */
int sb_elf_scan_buf(const void *data, size_t len, sb_elf_object_cb cb, void *arg,
    struct sb_error **err);

/*
 * Open name (a safe relative path, see path.h) below dirfd without following any symbolic
 * link (SB_OPEN_NO_SYMLINKS: a link fails with ELOOP), refuse anything but a regular file
 * (EINVAL, without blocking on a FIFO) or one larger than SB_ELF_FILE_MAX (EFBIG), read it
 * whole and scan it as sb_elf_scan_buf does. Error messages name the file.
 */
int sb_elf_scan_file_at(int dirfd, const char *name, sb_elf_object_cb cb, void *arg,
    struct sb_error **err);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-elf.c: the ELF and ar reader on images built here (ELF32/ELF64, both byte orders,
 * archives in GNU and BSD naming), on real files of the build (this test program and
 * libsb.a), and on hostile input: every truncation, overflowing offsets, bad links and
 * entry sizes, unterminated strings, oversized archives, and FIFOs and symlinks on disk.
 */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/elf.h"
#include "sb/error.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/mem.h"

#include "unit.h"

/* --- a small ELF and ar writer --- */

#define AR_HDR_LEN 60

/* A growing image, written in the byte order and class of the ELF being built. */
struct wb {
	unsigned char *p;
	size_t len;
	size_t cap;
	bool is64;
	bool be;
};

static void
wb_zero(struct wb *w, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = (w->len + n) * 2 + 64;
		w->p = sb_xreallocarray(w->p, w->cap, 1);
	}
	memset(w->p + w->len, 0, n);
	w->len += n;
}

static void
wb_bytes(struct wb *w, const void *d, size_t n)
{
	size_t at = w->len;

	wb_zero(w, n);
	memcpy(w->p + at, d, n);
}

static void
wb_align(struct wb *w, size_t a)
{
	while (w->len % a != 0)
		wb_zero(w, 1);
}

/* Store the n low bytes of v at off, in the image's byte order. */
static void
wb_set(struct wb *w, size_t off, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w->p[off + (w->be ? n - 1 - i : i)] = (unsigned char)(v >> (8 * i));
}

static void
wb_put(struct wb *w, uint64_t v, size_t n)
{
	size_t at = w->len;

	wb_zero(w, n);
	wb_set(w, at, v, n);
}

static void
wb_word(struct wb *w, uint64_t v)
{
	wb_put(w, v, w->is64 ? 8 : 4);
}

struct tsym {
	const char *name;
	unsigned char bind;
	unsigned char type;
	uint16_t shndx;
};

struct tspec {
	bool is64;
	bool be;
	uint16_t type;
	uint16_t machine;
	const struct tsym *syms;
	size_t nsyms;
	size_t repeat; /* extra copies of syms[0] in .symtab */
	const struct tsym *dynsyms;
	size_t ndynsyms;
	const char *const *needed;
	size_t nneeded;
	size_t needed_repeat; /* extra copies of needed[0] */
	const char *soname;
	uint64_t flags_1;
	bool interp; /* one PT_INTERP program header */
	bool no_sections;
};

/* Where the writer put things, for the tests that damage them. */
struct layout {
	size_t shoff;
	size_t shnum;
	size_t shentsize;
	size_t symtab, strtab, dynsym, dynstr, dynamic; /* section indexes, 0 if absent */
	size_t strtab_off, strtab_size, symtab_off;
};

static void
put_sym(struct wb *w, uint32_t name, const struct tsym *s)
{
	unsigned char info = (unsigned char)(s->bind << 4 | (s->type & 0xf));

	wb_put(w, name, 4);
	if (w->is64) {
		wb_put(w, info, 1);
		wb_put(w, 0, 1);
		wb_put(w, s->shndx, 2);
		wb_put(w, 0, 8);
		wb_put(w, 0, 8);
	} else {
		wb_put(w, 0, 4);
		wb_put(w, 0, 4);
		wb_put(w, info, 1);
		wb_put(w, 0, 1);
		wb_put(w, s->shndx, 2);
	}
}

static void
put_shdr(struct wb *w, uint32_t type, uint64_t off, uint64_t size, uint32_t link,
    uint64_t entsize)
{
	wb_put(w, 0, 4); /* sh_name: no section names, the reader goes by type */
	wb_put(w, type, 4);
	wb_word(w, 0);
	wb_word(w, 0);
	wb_word(w, off);
	wb_word(w, size);
	wb_put(w, link, 4);
	wb_put(w, type == SHT_SYMTAB ? 1 : 0, 4);
	wb_word(w, 8);
	wb_word(w, entsize);
}

/* Append "\0"-separated names to a string table being written at base; returns offsets. */
static uint32_t
put_str(struct wb *w, size_t base, const char *s)
{
	uint32_t off = (uint32_t)(w->len - base);

	wb_bytes(w, s, strlen(s) + 1);
	return off;
}

/*
 * Lay out an ELF image: header, [PT_INTERP], .strtab, .symtab, [.dynstr, .dynsym, .dynamic],
 * then the section headers, last, so that any truncation cuts them.
 */
static void
build_elf(const struct tspec *s, struct wb *w, struct layout *l)
{
	size_t ehsize = s->is64 ? 64 : 52, symsz = s->is64 ? 24 : 16, dynsz = s->is64 ? 16 : 8;
	size_t phoff = 0, symtab_off, dynstr_off = 0, dynstr_size = 0, dynsym_off = 0;
	size_t dyn_off = 0, ndyn = 0;
	bool dyn = s->ndynsyms > 0 || s->nneeded > 0 || s->soname != NULL || s->flags_1 != 0;
	uint32_t *names = sb_xcalloc(s->nsyms + s->ndynsyms + s->nneeded + 1, sizeof(*names));
	uint32_t soname_off = 0;

	memset(w, 0, sizeof(*w));
	memset(l, 0, sizeof(*l));
	w->is64 = s->is64;
	w->be = s->be;
	wb_zero(w, ehsize);
	if (s->interp) {
		phoff = w->len;
		wb_put(w, PT_INTERP, 4);
		wb_zero(w, (s->is64 ? 56 : 32) - 4);
		wb_bytes(w, "/lib/ld-test.so", 16);
	}

	l->strtab_off = w->len;
	wb_zero(w, 1);
	for (size_t i = 0; i < s->nsyms; i++)
		names[i] = put_str(w, l->strtab_off, s->syms[i].name);
	l->strtab_size = w->len - l->strtab_off;
	wb_align(w, 8);
	symtab_off = l->symtab_off = w->len;
	wb_zero(w, symsz);
	for (size_t i = 0; i < s->nsyms; i++)
		put_sym(w, names[i], &s->syms[i]);
	for (size_t i = 0; i < s->repeat; i++)
		put_sym(w, names[0], &s->syms[0]);

	if (dyn) {
		uint32_t *dn = names + s->nsyms, *nn = names + s->nsyms + s->ndynsyms;

		dynstr_off = w->len;
		wb_zero(w, 1);
		for (size_t i = 0; i < s->ndynsyms; i++)
			dn[i] = put_str(w, dynstr_off, s->dynsyms[i].name);
		for (size_t i = 0; i < s->nneeded; i++)
			nn[i] = put_str(w, dynstr_off, s->needed[i]);
		if (s->soname != NULL)
			soname_off = put_str(w, dynstr_off, s->soname);
		dynstr_size = w->len - dynstr_off;
		wb_align(w, 8);
		dynsym_off = w->len;
		wb_zero(w, symsz);
		for (size_t i = 0; i < s->ndynsyms; i++)
			put_sym(w, dn[i], &s->dynsyms[i]);
		dyn_off = w->len;
		for (size_t i = 0; i < s->nneeded + s->needed_repeat; i++, ndyn++) {
			wb_word(w, DT_NEEDED);
			wb_word(w, nn[i < s->nneeded ? i : 0]);
		}
		if (s->soname != NULL) {
			wb_word(w, DT_SONAME);
			wb_word(w, soname_off);
			ndyn++;
		}
		if (s->flags_1 != 0) {
			wb_word(w, DT_FLAGS_1);
			wb_word(w, s->flags_1);
			ndyn++;
		}
		wb_word(w, DT_NULL);
		wb_word(w, 0);
		ndyn++;
	}

	wb_align(w, 8);
	l->shoff = w->len;
	l->shentsize = s->is64 ? 64 : 40;
	put_shdr(w, SHT_NULL, 0, 0, 0, 0);
	put_shdr(w, SHT_SYMTAB, symtab_off, (1 + s->nsyms + s->repeat) * symsz, 2, symsz);
	put_shdr(w, SHT_STRTAB, l->strtab_off, l->strtab_size, 0, 0);
	l->symtab = 1;
	l->strtab = 2;
	l->shnum = 3;
	if (dyn) {
		put_shdr(w, SHT_DYNSYM, dynsym_off, (1 + s->ndynsyms) * symsz, 4, symsz);
		put_shdr(w, SHT_STRTAB, dynstr_off, dynstr_size, 0, 0);
		put_shdr(w, SHT_DYNAMIC, dyn_off, ndyn * dynsz, 4, dynsz);
		l->dynsym = 3;
		l->dynstr = 4;
		l->dynamic = 5;
		l->shnum = 6;
	}

	memcpy(w->p, ELFMAG, SELFMAG);
	w->p[EI_CLASS] = s->is64 ? ELFCLASS64 : ELFCLASS32;
	w->p[EI_DATA] = s->be ? ELFDATA2MSB : ELFDATA2LSB;
	w->p[EI_VERSION] = EV_CURRENT;
	wb_set(w, 16, s->type, 2);
	wb_set(w, 18, s->machine, 2);
	wb_set(w, 20, EV_CURRENT, 4);
	wb_set(w, s->is64 ? 32 : 28, phoff, s->is64 ? 8 : 4);
	wb_set(w, s->is64 ? 40 : 32, s->no_sections ? 0 : l->shoff, s->is64 ? 8 : 4);
	wb_set(w, s->is64 ? 52 : 40, ehsize, 2);
	wb_set(w, s->is64 ? 54 : 42, s->interp ? (s->is64 ? 56 : 32) : 0, 2);
	wb_set(w, s->is64 ? 56 : 44, s->interp ? 1 : 0, 2);
	wb_set(w, s->is64 ? 58 : 46, l->shentsize, 2);
	wb_set(w, s->is64 ? 60 : 48, s->no_sections ? 0 : l->shnum, 2);
	free(names);
}

enum shfield { SH_TYPE, SH_OFFSET, SH_SIZE, SH_LINK, SH_ENTSIZE };

/* Overwrite one field of section header idx. */
static void
set_sh(struct wb *w, const struct layout *l, size_t idx, enum shfield f, uint64_t v)
{
	static const size_t off32[] = { 4, 16, 20, 24, 36 }, off64[] = { 4, 24, 32, 40, 56 };
	static const size_t sz64[] = { 4, 8, 8, 4, 8 };
	size_t base = l->shoff + idx * l->shentsize;

	wb_set(w, base + (w->is64 ? off64[f] : off32[f]), v, w->is64 ? sz64[f] : 4);
}

/* Append one ar member; name16 goes into the 16-byte name field as it is. */
static void
ar_put(struct wb *a, const char *name16, const void *data, size_t n)
{
	char hdr[AR_HDR_LEN + 1];

	/* Not ck_assert: it reports to the parent on every call, and this runs 100k times. */
	if (snprintf(hdr, sizeof(hdr), "%-16.16s%-12s%-6s%-6s%-8s%-10zu`\n", name16, "0", "0", "0",
		"644", n) != AR_HDR_LEN)
		ck_abort_msg("member header for '%s'", name16);
	wb_bytes(a, hdr, AR_HDR_LEN);
	wb_bytes(a, data, n);
	if (n & 1)
		wb_bytes(a, "\n", 1);
}

/* --- what the callback saw, copied out (the object is valid during the callback only) --- */

#define SEEN_MAX      8
#define SEEN_SYMS_MAX 64

struct seen_sym {
	char *name;
	bool defined;
	bool dynamic;
	unsigned char bind;
	unsigned char type;
};

struct seen {
	char *member;
	enum sb_elf_kind kind;
	unsigned machine;
	bool is64, be, has_symtab, has_dynsym, truncated;
	size_t nsymbols, nneeded, nskipped;
	struct seen_sym syms[SEEN_SYMS_MAX];
	char *needed[SEEN_SYMS_MAX];
};

struct result {
	int n;
	int stop_at; /* return -7 from the callback when n reaches this (0: never) */
	struct seen o[SEEN_MAX];
};

static int
record(const struct sb_elf_object *obj, void *arg)
{
	struct result *r = arg;
	struct seen *s = r->n < SEEN_MAX ? &r->o[r->n] : NULL;

	r->n++;
	/* Touch every string: a pointer outside the image shows up under ASan. */
	for (size_t i = 0; i < obj->nsymbols; i++)
		if (strlen(obj->symbols[i].name) == 0)
			ck_abort_msg("empty symbol name %zu", i);
	for (size_t i = 0; i < obj->nneeded; i++)
		if (strlen(obj->needed[i]) == 0)
			ck_abort_msg("empty DT_NEEDED %zu", i);
	if (s != NULL) {
		s->member = obj->member != NULL ? sb_xstrdup(obj->member) : NULL;
		s->kind = obj->kind;
		s->machine = obj->machine;
		s->is64 = obj->is64;
		s->be = obj->big_endian;
		s->has_symtab = obj->has_symtab;
		s->has_dynsym = obj->has_dynsym;
		s->truncated = obj->truncated;
		s->nsymbols = obj->nsymbols;
		s->nneeded = obj->nneeded;
		s->nskipped = obj->nskipped;
		for (size_t i = 0; i < obj->nsymbols && i < SEEN_SYMS_MAX; i++) {
			const struct sb_elf_symbol *y = &obj->symbols[i];

			s->syms[i] = (struct seen_sym){ sb_xstrdup(y->name), y->defined, y->dynamic,
				y->bind, y->type };
		}
		for (size_t i = 0; i < obj->nneeded && i < SEEN_SYMS_MAX; i++)
			s->needed[i] = sb_xstrdup(obj->needed[i]);
	}
	return r->stop_at != 0 && r->n >= r->stop_at ? -7 : 0;
}

static void
result_release(struct result *r)
{
	for (int i = 0; i < r->n && i < SEEN_MAX; i++) {
		free(r->o[i].member);
		for (size_t j = 0; j < SEEN_SYMS_MAX; j++) {
			free(r->o[i].syms[j].name);
			free(r->o[i].needed[j]);
		}
	}
	memset(r, 0, sizeof(*r));
}

/* Scan a copy of exactly len bytes, so that ASan catches any read past the end. */
static int
scan_copy(const void *data, size_t len, struct result *r, struct sb_error **err)
{
	unsigned char *copy = sb_xmalloc(len);
	int rc;

	if (len > 0)
		memcpy(copy, data, len);
	rc = sb_elf_scan_buf(copy, len, r != NULL ? record : NULL, r, err);
	free(copy);
	return rc;
}

/* --- the images --- */

static const struct tsym main_syms[] = {
	{ "main", STB_GLOBAL, STT_FUNC, 1 },
	{ "__asan_init", STB_GLOBAL, STT_NOTYPE, SHN_UNDEF },
	{ "__asan_default_options", STB_WEAK, STT_FUNC, 1 },
	{ "local_helper", STB_LOCAL, STT_FUNC, 1 },
	{ "", STB_LOCAL, STT_SECTION, 1 }, /* empty name: left out */
	{ "common_var", STB_GLOBAL, STT_OBJECT, SHN_COMMON },
	{ "big_index", STB_GLOBAL, STT_OBJECT, SHN_XINDEX },
	{ "abs_sym", STB_GLOBAL, STT_NOTYPE, SHN_ABS },
};

static const struct tsym main_dynsyms[] = {
	{ "__sanitizer_set_report_path", STB_GLOBAL, STT_FUNC, SHN_UNDEF },
	{ "exported", STB_GLOBAL, STT_FUNC, 1 },
};

static const char *const main_needed[] = { "libc.so.6", "libasan.so.8" };

static struct tspec
main_spec(bool is64, bool be)
{
	return (struct tspec){
		.is64 = is64,
		.be = be,
		.type = ET_DYN,
		.machine = is64 ? EM_X86_64 : EM_PPC,
		.syms = main_syms,
		.nsyms = SB_ARRAY_SIZE(main_syms),
		.dynsyms = main_dynsyms,
		.ndynsyms = SB_ARRAY_SIZE(main_dynsyms),
		.needed = main_needed,
		.nneeded = SB_ARRAY_SIZE(main_needed),
		.flags_1 = DF_1_NOW | DF_1_PIE,
	};
}

/* A relocatable object that calls one function and defines another. */
static void
build_object(struct wb *w, bool is64, bool be, const char *def, const char *undef)
{
	const struct tsym syms[] = {
		{ def, STB_GLOBAL, STT_FUNC, 1 },
		{ undef, STB_GLOBAL, STT_NOTYPE, SHN_UNDEF },
	};
	struct tspec s = { .is64 = is64, .be = be, .type = ET_REL, .machine = EM_X86_64,
		.syms = syms, .nsyms = 2 };
	struct layout l;

	build_elf(&s, w, &l);
}

static void
check_main(const struct seen *o, bool is64, bool be)
{
	static const struct {
		const char *name;
		bool defined, dynamic;
		unsigned char bind, type;
	} want[] = {
		{ "main", true, false, STB_GLOBAL, STT_FUNC },
		{ "__asan_init", false, false, STB_GLOBAL, STT_NOTYPE },
		{ "__asan_default_options", true, false, STB_WEAK, STT_FUNC },
		{ "local_helper", true, false, STB_LOCAL, STT_FUNC },
		{ "common_var", true, false, STB_GLOBAL, STT_OBJECT },
		{ "big_index", true, false, STB_GLOBAL, STT_OBJECT },
		{ "abs_sym", true, false, STB_GLOBAL, STT_NOTYPE },
		{ "__sanitizer_set_report_path", false, true, STB_GLOBAL, STT_FUNC },
		{ "exported", true, true, STB_GLOBAL, STT_FUNC },
	};

	ck_assert_ptr_null(o->member);
	ck_assert_int_eq(o->kind, SB_ELF_EXECUTABLE);
	ck_assert_uint_eq(o->machine, is64 ? EM_X86_64 : EM_PPC);
	ck_assert(o->is64 == is64);
	ck_assert(o->be == be);
	ck_assert(o->has_symtab && o->has_dynsym);
	ck_assert(!o->truncated);
	ck_assert_uint_eq(o->nskipped, 0);
	ck_assert_uint_eq(o->nsymbols, SB_ARRAY_SIZE(want));
	for (size_t i = 0; i < SB_ARRAY_SIZE(want); i++) {
		ck_assert_str_eq(o->syms[i].name, want[i].name);
		ck_assert_msg(o->syms[i].defined == want[i].defined, "%s", want[i].name);
		ck_assert_msg(o->syms[i].dynamic == want[i].dynamic, "%s", want[i].name);
		ck_assert_uint_eq(o->syms[i].bind, want[i].bind);
		ck_assert_uint_eq(o->syms[i].type, want[i].type);
	}
	ck_assert_uint_eq(o->nneeded, 2);
	ck_assert_str_eq(o->needed[0], "libc.so.6");
	ck_assert_str_eq(o->needed[1], "libasan.so.8");
}

/* --- tests --- */

static const struct {
	bool is64, be;
} classes[] = {
	{ true, false },  /* ELF64 LE (x86-64) */
	{ false, true },  /* ELF32 BE (ppc) */
	{ true, true },	  /* ELF64 BE (s390x, ppc64) */
	{ false, false }, /* ELF32 LE (i386, arm) */
};

START_TEST(test_image_exact)
{
	struct tspec s = main_spec(classes[_i].is64, classes[_i].be);
	struct result r = { 0 };
	struct sb_error *err = NULL;
	struct layout l;
	struct wb w;

	build_elf(&s, &w, &l);
	ck_assert_int_eq(sb_elf_sniff(w.p, w.len), SB_ELF_FILE_ELF);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, &err), 1);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(r.n, 1);
	check_main(&r.o[0], classes[_i].is64, classes[_i].be);
	result_release(&r);

	/* Extended numbering: e_shnum 0, the count in section 0's sh_size. */
	wb_set(&w, w.is64 ? 60 : 48, 0, 2);
	set_sh(&w, &l, 0, SH_SIZE, l.shnum);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, &err), 1);
	check_main(&r.o[0], classes[_i].is64, classes[_i].be);
	result_release(&r);
	free(w.p);
}
END_TEST

/* e_type and the PIE tells, against the kind reported. */
static const struct {
	uint16_t type;
	uint64_t flags_1;
	const char *soname;
	bool interp;
	enum sb_elf_kind kind;
} kinds[] = {
	{ ET_REL, 0, NULL, false, SB_ELF_RELOCATABLE },
	{ ET_EXEC, 0, NULL, true, SB_ELF_EXECUTABLE },
	{ ET_DYN, DF_1_PIE, NULL, false, SB_ELF_EXECUTABLE },
	{ ET_DYN, 0, NULL, true, SB_ELF_EXECUTABLE },	     /* old linker's PIE */
	{ ET_DYN, 0, "libt.so.1", true, SB_ELF_SHARED },     /* libc-like: interp and soname */
	{ ET_DYN, DF_1_NOW, "libt.so.1", false, SB_ELF_SHARED },
	{ ET_DYN, 0, NULL, false, SB_ELF_SHARED },
	{ ET_CORE, 0, NULL, false, SB_ELF_CORE_OR_OTHER },
	{ 0xfe00, 0, NULL, false, SB_ELF_CORE_OR_OTHER },
};

START_TEST(test_kinds)
{
	struct tspec s = main_spec(_i % 2 == 0, _i % 3 == 0);
	struct result r = { 0 };
	struct layout l;
	struct wb w;

	s.type = kinds[_i].type;
	s.flags_1 = kinds[_i].flags_1;
	s.soname = kinds[_i].soname;
	s.interp = kinds[_i].interp;
	build_elf(&s, &w, &l);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_int_eq(r.o[0].kind, kinds[_i].kind);
	result_release(&r);
	free(w.p);
}
END_TEST

START_TEST(test_no_section_headers)
{
	struct tspec s = main_spec(true, false);
	struct result r = { 0 };
	struct layout l;
	struct wb w;

	s.no_sections = true;
	build_elf(&s, &w, &l);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert(!r.o[0].has_symtab && !r.o[0].has_dynsym);
	ck_assert_uint_eq(r.o[0].nsymbols, 0);
	ck_assert_uint_eq(r.o[0].nneeded, 0);
	result_release(&r);
	free(w.p);
}
END_TEST

START_TEST(test_truncated_everywhere)
{
	struct tspec s = main_spec(classes[_i].is64, classes[_i].be);
	struct layout l;
	struct wb w;

	s.interp = true;
	build_elf(&s, &w, &l);
	/* The section headers are last: every proper prefix is missing some of them. */
	for (size_t len = 0; len < w.len; len++) {
		struct result r = { 0 };
		struct sb_error *err = NULL;

		ck_assert_int_eq(scan_copy(w.p, len, &r, &err), -1);
		ck_assert_int_eq(sb_error_code(err), EINVAL);
		ck_assert_int_eq(r.n, 0);
		sb_error_release(&err);
	}
	free(w.p);
}
END_TEST

/* A damage done to the main image, and the error it must give. */
struct damage {
	const char *what;
	size_t sec; /* 1 symtab, 2 strtab, 3 dynsym, 4 dynstr, 5 dynamic; 0: header */
	enum shfield field;
	uint64_t value;
	const char *msg; /* part of the error message */
};

static const struct damage damages[] = {
	{ "symtab offset overflows", 1, SH_OFFSET, UINT64_MAX, "symbol table past the end" },
	{ "symtab offset past end", 1, SH_OFFSET, 0x10000, "symbol table past the end" },
	{ "symtab size overflows", 1, SH_SIZE, UINT64_MAX - (UINT64_MAX % 24),
	    "symbol table past the end" },
	{ "symtab size not entries", 1, SH_SIZE, 25, "not a multiple" },
	{ "symtab entsize 0", 1, SH_ENTSIZE, 0, "entry size" },
	{ "symtab entsize 1", 1, SH_ENTSIZE, 1, "entry size" },
	{ "symtab link past table", 1, SH_LINK, 1000, "links to section 1000" },
	{ "symtab link max", 1, SH_LINK, UINT32_MAX, "links to section" },
	{ "symtab link to null section", 1, SH_LINK, 0, "not a string table" },
	{ "symtab link to itself", 1, SH_LINK, 1, "not a string table" },
	{ "strtab offset overflows", 2, SH_OFFSET, UINT64_MAX, "string table of the symbol table" },
	{ "strtab size overflows", 2, SH_SIZE, UINT64_MAX, "string table of the symbol table" },
	{ "dynsym link past table", 3, SH_LINK, 6, "links to section 6" },
	{ "dynamic link past table", 5, SH_LINK, 77, "dynamic section links" },
	{ "dynamic size overflows", 5, SH_SIZE, UINT64_MAX & ~(uint64_t)15,
	    "dynamic section past" },
	{ "dynamic entsize wrong", 5, SH_ENTSIZE, 24, "dynamic section entry size" },
	{ "two symbol tables", 3, SH_TYPE, SHT_SYMTAB, "more than one" },
	{ "two dynamic symbol tables", 1, SH_TYPE, SHT_DYNSYM, "more than one" },
};

START_TEST(test_damaged_sections)
{
	const struct damage *d = &damages[_i / 2];
	struct tspec s = main_spec(_i % 2 == 0, _i % 2 == 1);
	struct result r = { 0 };
	struct sb_error *err = NULL;
	struct layout l;
	struct wb w;
	uint64_t v = d->value;

	build_elf(&s, &w, &l);
	/* 32-bit fields: keep the value's meaning (all-ones stays all-ones, sizes align). */
	if (!w.is64 && v > UINT32_MAX)
		v = d->field == SH_SIZE && d->sec != 2 ? (UINT32_MAX & ~(uint64_t)15) : UINT32_MAX;
	if (!w.is64 && d->field == SH_ENTSIZE && d->value == 24)
		v = 16;
	set_sh(&w, &l, d->sec, d->field, v);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, &err), -1);
	ck_assert_int_eq(r.n, 0);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	ck_assert_msg(strstr(sb_error_message(err), d->msg) != NULL, "%s (%s): '%s'", d->what,
	    w.is64 ? "64" : "32", sb_error_message(err));
	sb_error_release(&err);
	free(w.p);
}
END_TEST

/* Damage to the ELF header: offset, size, value, message. */
static const struct {
	const char *what;
	size_t off64, off32, n;
	uint64_t value;
	const char *msg;
} header_damages[] = {
	{ "class", EI_CLASS, EI_CLASS, 1, 3, "ELF class" },
	{ "data", EI_DATA, EI_DATA, 1, 0, "data encoding" },
	{ "version", EI_VERSION, EI_VERSION, 1, 2, "ELF version" },
	{ "shoff overflows", 40, 32, 8, UINT64_MAX, "section header table past" },
	{ "shoff near end", 40, 32, 8, 0, "section header table past" }, /* value: len - 10 */
	{ "shnum too big", 60, 48, 2, 0xffff, "section header table past" },
	{ "shentsize 63", 58, 46, 2, 63, "section header size" },
	{ "shentsize 0", 58, 46, 2, 0, "section header size" },
	{ "phentsize wrong", 54, 42, 2, 7, "program header size" },
	{ "phnum too big", 56, 44, 2, 0xfffe, "program header table past" },
	{ "phoff overflows", 32, 28, 8, UINT64_MAX, "program header table past" },
};

START_TEST(test_damaged_header)
{
	struct tspec s = main_spec(_i % 2 == 0, _i % 2 == 1);
	int c = _i / 2;
	struct sb_error *err = NULL;
	struct layout l;
	struct wb w;
	uint64_t v = header_damages[c].value;
	size_t n = header_damages[c].n;

	s.interp = true;
	build_elf(&s, &w, &l);
	if (!w.is64 && n == 8)
		n = 4;
	if (strcmp(header_damages[c].what, "shoff near end") == 0)
		v = w.len - 10;
	if (n < 8)
		v &= (UINT64_C(1) << (8 * n)) - 1;
	if (n == 1)
		w.p[header_damages[c].off64] = (unsigned char)v;
	else
		wb_set(&w, w.is64 ? header_damages[c].off64 : header_damages[c].off32, v, n);
	ck_assert_int_eq(scan_copy(w.p, w.len, NULL, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	ck_assert_msg(strstr(sb_error_message(err), header_damages[c].msg) != NULL, "%s: '%s'",
	    header_damages[c].what, sb_error_message(err));
	sb_error_release(&err);
	free(w.p);
}
END_TEST

START_TEST(test_header_misc)
{
	struct tspec s = main_spec(true, false);
	struct sb_error *err = NULL;
	struct layout l;
	struct wb w;

	build_elf(&s, &w, &l);
	/* Too short for the header its class needs. */
	ck_assert_int_eq(scan_copy(w.p, 40, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "header truncated"));
	sb_error_release(&err);
	/* Extended numbering whose count does not fit. */
	wb_set(&w, 60, 0, 2);
	set_sh(&w, &l, 0, SH_SIZE, UINT64_MAX);
	ck_assert_int_eq(scan_copy(w.p, w.len, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "section header table past"));
	sb_error_release(&err);
	/* A section count without a table. */
	wb_set(&w, 60, 3, 2);
	wb_set(&w, 40, 0, 8);
	ck_assert_int_eq(scan_copy(w.p, w.len, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "no section header table"));
	sb_error_release(&err);
	free(w.p);

	/* Two SHT_DYNAMIC sections: the dynamic section's header copied over .dynsym's. */
	build_elf(&s, &w, &l);
	memcpy(w.p + l.shoff + l.dynsym * l.shentsize, w.p + l.shoff + l.dynamic * l.shentsize,
	    l.shentsize);
	ck_assert_int_eq(scan_copy(w.p, w.len, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "more than one"));
	sb_error_release(&err);
	free(w.p);
}
END_TEST

START_TEST(test_bad_names_skipped)
{
	struct tspec s = main_spec(_i == 0, _i == 1);
	struct result r = { 0 };
	struct layout l;
	struct wb w;
	size_t symsz = _i == 0 ? 24 : 16;

	build_elf(&s, &w, &l);
	/* Symbol 1 ("main"): a name offset past the table. */
	wb_set(&w, l.symtab_off + symsz, 0xfffffff0, 4);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nskipped, 1);
	ck_assert_uint_eq(r.o[0].nsymbols, 8);
	ck_assert_str_eq(r.o[0].syms[0].name, "__asan_init");
	result_release(&r);

	/* The string table loses its last byte: "abs_sym" is no longer terminated. */
	set_sh(&w, &l, 2, SH_SIZE, l.strtab_size - 1);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nskipped, 2);
	ck_assert_uint_eq(r.o[0].nsymbols, 7);
	result_release(&r);

	/* No NUL anywhere in the string table: every named symbol is skipped, none crashes. */
	for (size_t i = 0; i < l.strtab_size; i++)
		w.p[l.strtab_off + i] = 'x';
	set_sh(&w, &l, 2, SH_SIZE, l.strtab_size);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nsymbols, 2); /* the dynamic ones */
	ck_assert(r.o[0].syms[0].dynamic);
	ck_assert_uint_eq(r.o[0].nskipped, 8); /* the once-empty name is unterminated now */
	result_release(&r);

	/* An empty string table. */
	set_sh(&w, &l, 2, SH_SIZE, 0);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nsymbols, 2);
	result_release(&r);
	free(w.p);
}
END_TEST

START_TEST(test_long_name)
{
	/* SB_ELF_NAME_MAX bytes is kept, one more is skipped. */
	char *ok = sb_xmalloc(SB_ELF_NAME_MAX + 1), *tool = sb_xmalloc(SB_ELF_NAME_MAX + 2);
	struct tsym syms[2];
	struct tspec s = { .is64 = true, .type = ET_REL, .syms = syms, .nsyms = 2 };
	struct result r = { 0 };
	struct layout l;
	struct wb w;

	memset(ok, 'a', SB_ELF_NAME_MAX);
	ok[SB_ELF_NAME_MAX] = '\0';
	memset(tool, 'b', SB_ELF_NAME_MAX + 1);
	tool[SB_ELF_NAME_MAX + 1] = '\0';
	syms[0] = (struct tsym){ ok, STB_GLOBAL, STT_FUNC, 1 };
	syms[1] = (struct tsym){ tool, STB_GLOBAL, STT_FUNC, 1 };
	build_elf(&s, &w, &l);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nsymbols, 1);
	ck_assert_uint_eq(strlen(r.o[0].syms[0].name), SB_ELF_NAME_MAX);
	ck_assert_uint_eq(r.o[0].nskipped, 1);
	result_release(&r);
	free(w.p);
	free(ok);
	free(tool);
}
END_TEST

START_TEST(test_symbol_cap)
{
	static const struct tsym one[] = { { "s", STB_GLOBAL, STT_FUNC, 1 } };
	struct tspec s = { .is64 = _i == 0, .be = _i == 1, .type = ET_REL, .syms = one,
		.nsyms = 1 };
	struct result r = { 0 };
	struct layout l;
	struct wb w;

	/* Exactly the cap (plus the null entry): all kept. */
	s.repeat = SB_ELF_SYMBOLS_MAX - 1;
	build_elf(&s, &w, &l);
	ck_assert_int_eq(sb_elf_scan_buf(w.p, w.len, record, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nsymbols, SB_ELF_SYMBOLS_MAX);
	ck_assert(!r.o[0].truncated);
	result_release(&r);
	free(w.p);

	/* One more: cut at the cap and flagged. */
	s.repeat = SB_ELF_SYMBOLS_MAX + 10;
	build_elf(&s, &w, &l);
	ck_assert_int_eq(sb_elf_scan_buf(w.p, w.len, record, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nsymbols, SB_ELF_SYMBOLS_MAX);
	ck_assert(r.o[0].truncated);
	result_release(&r);
	free(w.p);
}
END_TEST

START_TEST(test_needed_cap)
{
	static const char *const one[] = { "libx.so.1" };
	struct tspec s = main_spec(true, false);
	struct result r = { 0 };
	struct layout l;
	struct wb w;

	s.needed = one;
	s.nneeded = 1;
	s.needed_repeat = SB_ELF_NEEDED_MAX - 1;
	build_elf(&s, &w, &l);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nneeded, SB_ELF_NEEDED_MAX);
	ck_assert(!r.o[0].truncated);
	result_release(&r);
	free(w.p);

	s.needed_repeat = SB_ELF_NEEDED_MAX;
	build_elf(&s, &w, &l);
	ck_assert_int_eq(scan_copy(w.p, w.len, &r, NULL), 1);
	ck_assert_uint_eq(r.o[0].nneeded, SB_ELF_NEEDED_MAX);
	ck_assert(r.o[0].truncated);
	result_release(&r);
	free(w.p);
}
END_TEST

START_TEST(test_callback_stops)
{
	struct tspec s = main_spec(true, false);
	struct result r = { .stop_at = 1 };
	struct sb_error *err = NULL;
	struct layout l;
	struct wb w, a = { 0 };

	build_elf(&s, &w, &l);
	ck_assert_int_eq(sb_elf_scan_buf(w.p, w.len, record, &r, &err), -7);
	ck_assert_ptr_null(err);
	result_release(&r);
	/* In an archive: the second member is never reached. */
	wb_bytes(&a, "!<arch>\n", 8);
	ar_put(&a, "a.o/", w.p, w.len);
	ar_put(&a, "b.o/", w.p, w.len);
	r.stop_at = 1;
	ck_assert_int_eq(sb_elf_scan_buf(a.p, a.len, record, &r, &err), -7);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(r.n, 1);
	result_release(&r);
	/* No callback at all: a validation that counts objects. */
	ck_assert_int_eq(sb_elf_scan_buf(a.p, a.len, NULL, NULL, &err), 2);
	free(w.p);
	free(a.p);
}
END_TEST

static const struct {
	const char *data;
	size_t len;
	enum sb_elf_file_type type;
} sniffs[] = {
	{ "", 0, SB_ELF_FILE_NONE },
	{ "\177EL", 3, SB_ELF_FILE_NONE },
	{ "\177ELF", 4, SB_ELF_FILE_ELF },
	{ "!<arch>\n", 8, SB_ELF_FILE_ARCHIVE },
	{ "!<arch>", 7, SB_ELF_FILE_NONE },
	{ "!<thin>\n", 8, SB_ELF_FILE_THIN_ARCHIVE },
	{ "#!/bin/sh\n", 10, SB_ELF_FILE_NONE },
	{ "BC\xc0\xde", 4, SB_ELF_FILE_NONE }, /* LLVM bitcode */
};

START_TEST(test_sniff)
{
	ck_assert_int_eq(sb_elf_sniff(sniffs[_i].data, sniffs[_i].len), sniffs[_i].type);
}
END_TEST

START_TEST(test_not_elf)
{
	struct sb_error *err = NULL;

	ck_assert_int_eq(sb_elf_scan_buf("hello", 5, NULL, NULL, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	sb_error_release(&err);
	ck_assert_int_eq(sb_elf_scan_buf("!<thin>\n", 8, NULL, NULL, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "thin archive"));
	sb_error_release(&err);
	/* Larger than SB_ELF_FILE_MAX (never read: the length alone refuses it). */
	ck_assert_int_eq(sb_elf_scan_buf("\177ELF", (size_t)SB_ELF_FILE_MAX + 1, NULL, NULL, &err),
	    -1);
	ck_assert_int_eq(sb_error_code(err), EFBIG);
	sb_error_release(&err);
}
END_TEST

/* GNU archive: symbol tables, a "//" table, short, long and BSD names, a text member. */
static void
build_archive(struct wb *a, struct wb *o1, struct wb *o2, struct wb *o3)
{
	static const char names[] = "a_rather_long_member_name.o/\nsecond_long_name_here.o/\n";
	struct wb bsd = { 0 };

	build_object(o1, true, false, "short_def", "__asan_report_load4");
	build_object(o2, false, true, "long_def", "__asan_init");
	build_object(o3, true, false, "bsd_def", "__sanitizer_set_report_path");
	memset(a, 0, sizeof(*a));
	wb_bytes(a, "!<arch>\n", 8);
	ar_put(a, "/", "\0\0\0\1\0\0\0\0x\0", 10);		 /* GNU symbol index */
	ar_put(a, "/SYM64/", "\0\0\0\0\0\0\0\0", 8);
	ar_put(a, "//", names, sizeof(names) - 1);
	ar_put(a, "short.o/", o1->p, o1->len);
	ar_put(a, "README/", "not an object\n", 13); /* odd size: padded */
	ar_put(a, "/29", o2->p, o2->len);
	wb_bytes(&bsd, "bsd-name.o\0\0", 12);
	wb_bytes(&bsd, o3->p, o3->len);
	ar_put(a, "#1/12", bsd.p, bsd.len);
	ar_put(a, "__.SYMDEF", "junk", 4);
	free(bsd.p);
}

START_TEST(test_archive)
{
	struct wb a, o1, o2, o3;
	struct result r = { 0 };
	struct sb_error *err = NULL;

	build_archive(&a, &o1, &o2, &o3);
	ck_assert_int_eq(sb_elf_sniff(a.p, a.len), SB_ELF_FILE_ARCHIVE);
	ck_assert_int_eq(scan_copy(a.p, a.len, &r, &err), 3);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(r.n, 3);
	ck_assert_str_eq(r.o[0].member, "short.o");
	ck_assert_str_eq(r.o[0].syms[0].name, "short_def");
	ck_assert(r.o[0].syms[0].defined);
	ck_assert_str_eq(r.o[0].syms[1].name, "__asan_report_load4");
	ck_assert(!r.o[0].syms[1].defined);
	ck_assert_int_eq(r.o[0].kind, SB_ELF_RELOCATABLE);
	ck_assert_str_eq(r.o[1].member, "second_long_name_here.o");
	ck_assert_str_eq(r.o[1].syms[0].name, "long_def");
	ck_assert(!r.o[1].is64 && r.o[1].be);
	ck_assert_str_eq(r.o[2].member, "bsd-name.o");
	ck_assert_str_eq(r.o[2].syms[1].name, "__sanitizer_set_report_path");
	result_release(&r);

	/* Without the final padding byte (the last member has an odd size). */
	{
		struct wb b = { 0 };

		wb_bytes(&b, "!<arch>\n", 8);
		ar_put(&b, "odd/", "abc", 3);
		ck_assert_int_eq(scan_copy(b.p, b.len - 1, &r, &err), 0);
		ck_assert_int_eq(scan_copy(b.p, 8, &r, &err), 0); /* empty archive */
		free(b.p);
	}
	free(a.p);
	free(o1.p);
	free(o2.p);
	free(o3.p);
}
END_TEST

START_TEST(test_archive_truncated_everywhere)
{
	struct wb a, o1, o2, o3;

	build_archive(&a, &o1, &o2, &o3);
	for (size_t len = 0; len < a.len; len++) {
		struct result r = { 0 };
		struct sb_error *err = NULL;
		int rc = scan_copy(a.p, len, &r, &err);

		/* A cut at a member boundary is a shorter, valid archive; any other is EINVAL. */
		ck_assert_msg(rc >= 0 || sb_error_code(err) == EINVAL, "len %zu: %d %s", len, rc,
		    sb_error_message(err));
		ck_assert_int_le(rc, 3);
		sb_error_release(&err);
		result_release(&r);
	}
	free(a.p);
	free(o1.p);
	free(o2.p);
	free(o3.p);
}
END_TEST

/* Hostile archive headers: the header text (name, size, terminator), and the error. */
static const struct {
	const char *what;
	const char *name;
	const char *size; /* NULL: the data's real size */
	const char *fmag;
	bool with_names;
	const char *msg;
} bad_members[] = {
	{ "size past the end", "x.o/", "999999", "`\n", false, "past the end of the file" },
	{ "size 10 digits", "x.o/", "9999999999", "`\n", false, "past the end of the file" },
	{ "size not decimal", "x.o/", "12a", "`\n", false, "bad size field" },
	{ "size negative", "x.o/", "-1", "`\n", false, "bad size field" },
	{ "size empty", "x.o/", "", "`\n", false, "bad size field" },
	{ "size leading space", "x.o/", " 4", "`\n", false, "bad size field" },
	{ "bad terminator", "x.o/", NULL, "`\r", false, "bad terminator" },
	{ "bad terminator 2", "x.o/", NULL, "\n`", false, "bad terminator" },
	{ "long name offset past table", "/500", NULL, "`\n", true, "past the" },
	{ "long name offset huge", "/999999999999999", NULL, "`\n", true, "past the" },
	{ "long name without table", "/0", NULL, "`\n", false, "without a long-name table" },
	{ "long name bad digits", "/1x", NULL, "`\n", true, "bad long name" },
	{ "unterminated long name", "/6", NULL, "`\n", true, "unterminated" },
	{ "BSD name past member", "#1/200", NULL, "`\n", false, "BSD name of 200" },
	{ "BSD name length junk", "#1/x", NULL, "`\n", false, "bad BSD name" },
};

START_TEST(test_archive_hostile)
{
	struct wb a = { 0 };
	struct sb_error *err = NULL;
	char hdr[AR_HDR_LEN + 1];
	const char *data = "0123456789";

	wb_bytes(&a, "!<arch>\n", 8);
	if (bad_members[_i].with_names)
		ar_put(&a, "//", "ok.o/\nnoend", 11);
	snprintf(hdr, sizeof(hdr), "%-16.16s%-12s%-6s%-6s%-8s%-10.10s%.2s", bad_members[_i].name,
	    "0", "0", "0", "644", bad_members[_i].size != NULL ? bad_members[_i].size : "10",
	    bad_members[_i].fmag);
	wb_bytes(&a, hdr, AR_HDR_LEN);
	wb_bytes(&a, data, 10);
	ck_assert_int_eq(scan_copy(a.p, a.len, NULL, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	ck_assert_msg(strstr(sb_error_message(err), bad_members[_i].msg) != NULL, "%s: '%s'",
	    bad_members[_i].what, sb_error_message(err));
	sb_error_release(&err);
	free(a.p);
}
END_TEST

START_TEST(test_archive_misc)
{
	struct wb a = { 0 }, o = { 0 }, bad;
	struct sb_error *err = NULL;
	struct layout l;
	struct tspec s = main_spec(true, false);

	/* A header cut short. */
	static const char cut[] = "!<arch>\nx.o/            0     ";
	wb_bytes(&a, cut, sizeof(cut) - 1);
	ck_assert_int_eq(scan_copy(a.p, a.len, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "truncated"));
	sb_error_release(&err);
	free(a.p);

	/* A second long-name table. */
	memset(&a, 0, sizeof(a));
	wb_bytes(&a, "!<arch>\n", 8);
	ar_put(&a, "//", "a.o/\n", 5);
	ar_put(&a, "//", "b.o/\n", 5);
	ck_assert_int_eq(scan_copy(a.p, a.len, NULL, &err), -1);
	ck_assert_ptr_nonnull(strstr(sb_error_message(err), "second long-name table"));
	sb_error_release(&err);
	free(a.p);

	/* A malformed ELF member fails the whole scan, naming the member (escaped). */
	build_elf(&s, &bad, &l);
	set_sh(&bad, &l, 1, SH_LINK, 99);
	build_object(&o, true, false, "f", "g");
	memset(&a, 0, sizeof(a));
	wb_bytes(&a, "!<arch>\n", 8);
	ar_put(&a, "good.o/", o.p, o.len);
	ar_put(&a, "bad\033.o/", bad.p, bad.len);
	ck_assert_int_eq(scan_copy(a.p, a.len, NULL, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EINVAL);
	ck_assert_msg(strstr(sb_error_message(err), "member 'bad\\x1b.o': symbol table links") !=
		NULL, "%s", sb_error_message(err));
	sb_error_release(&err);
	free(a.p);
	free(o.p);
	free(bad.p);
}
END_TEST

/* SB_ELF_MEMBERS_MAX members are read; one more is refused (EFBIG), in bounded time. */
START_TEST(test_archive_members_cap)
{
	struct wb a = { 0 };
	struct sb_error *err = NULL;
	struct result r = { 0 };

	wb_bytes(&a, "!<arch>\n", 8);
	for (int i = 0; i < SB_ELF_MEMBERS_MAX; i++)
		ar_put(&a, "e/", "", 0);
	ck_assert_int_eq(sb_elf_scan_buf(a.p, a.len, record, &r, &err), 0);
	ck_assert_ptr_null(err);
	ar_put(&a, "e/", "", 0);
	ck_assert_int_eq(sb_elf_scan_buf(a.p, a.len, record, &r, &err), -1);
	ck_assert_int_eq(sb_error_code(err), EFBIG);
	sb_error_release(&err);
	free(a.p);
}
END_TEST

/* --- files on disk --- */

static char tmp[PATH_MAX];
static int tmp_fd = -1;

static void
put_file(const char *name, const void *data, size_t n)
{
	int fd = openat(tmp_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
	close(fd);
}

static void
setup(void)
{
	const char *t = getenv("TMPDIR");
	struct tspec s = main_spec(true, false);
	struct layout l;
	struct wb w;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/sbelf.XXXXXX", t != NULL ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tmp_fd, 0);
	build_elf(&s, &w, &l);
	put_file("obj", w.p, w.len);
	ck_assert_int_eq(mkdirat(tmp_fd, "sub", 0755), 0);
	put_file("sub/obj", w.p, w.len);
	free(w.p);
	ck_assert_int_eq(symlinkat("obj", tmp_fd, "link"), 0);
	ck_assert_int_eq(symlinkat("../obj", tmp_fd, "sub/uplink"), 0);
	ck_assert_int_eq(mkfifoat(tmp_fd, "fifo", 0644), 0);
	/* Sparse: one byte over the cap without writing 512 MiB. */
	fd = openat(tmp_fd, "huge", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)SB_ELF_FILE_MAX + 1), 0);
	close(fd);
}

static void
teardown(void)
{
	static const char *const files[] = { "obj", "sub/obj", "link", "sub/uplink", "fifo",
		"huge" };

	for (size_t i = 0; i < SB_ARRAY_SIZE(files); i++)
		(void)unlinkat(tmp_fd, files[i], 0);
	(void)unlinkat(tmp_fd, "sub", AT_REMOVEDIR);
	close(tmp_fd);
	(void)rmdir(tmp);
}

static const struct {
	const char *name;
	int rc;
	int code;
} files[] = {
	{ "obj", 1, 0 },
	{ "sub/obj", 1, 0 },
	{ "link", -1, ELOOP },	       /* any symlink, even one that stays inside */
	{ "sub/uplink", -1, ELOOP },
	{ "fifo", -1, EINVAL },	       /* refused without blocking */
	{ "sub", -1, EINVAL },	       /* a directory */
	{ "huge", -1, EFBIG },
	{ "missing", -1, ENOENT },
	{ "../etc/passwd", -1, EINVAL }, /* not a safe relative path */
};

/* Each case runs with openat2 (_i even) and with the O_NOFOLLOW walk fs.c falls back to. */
START_TEST(test_scan_file_at)
{
	int c = _i / 2;
	struct result r = { 0 };
	struct sb_error *err = NULL;
	int rc;

	sb_fs_force_walk(_i % 2 == 1);
	rc = sb_elf_scan_file_at(tmp_fd, files[c].name, record, &r, &err);
	sb_fs_force_walk(false);
	ck_assert_msg(rc == files[c].rc, "%s: %d (%s)", files[c].name, rc, sb_error_message(err));
	if (files[c].rc < 0) {
		/* EXDEV and ELOOP both mean "refused to follow". */
		ck_assert_msg(sb_error_code(err) == files[c].code ||
			(files[c].code == ELOOP && sb_error_code(err) == EXDEV),
		    "%s: %s", files[c].name, sb_error_message(err));
		ck_assert_int_eq(r.n, 0);
	} else {
		check_main(&r.o[0], true, false);
	}
	sb_error_release(&err);
	result_release(&r);
}
END_TEST

/* --- real files of the build --- */

struct real {
	int objects;
	bool main_defined;
	bool libc_needed;
	bool has_symtab;
	bool undefined_dynsym;
	enum sb_elf_kind kind;
	bool elf_o, elf_def, elf_undef; /* libsb.a: member elf.o and two of its symbols */
};

static int
real_cb(const struct sb_elf_object *obj, void *arg)
{
	struct real *x = arg;
	bool is_elf_o = obj->member != NULL && strcmp(obj->member, "elf.o") == 0;

	x->objects++;
	x->kind = obj->kind;
	x->has_symtab = obj->has_symtab;
	x->elf_o = x->elf_o || is_elf_o;
	for (size_t i = 0; i < obj->nsymbols; i++) {
		const struct sb_elf_symbol *s = &obj->symbols[i];

		if (strcmp(s->name, "main") == 0 && s->defined && s->type == STT_FUNC)
			x->main_defined = true;
		if (s->dynamic && !s->defined)
			x->undefined_dynsym = true;
		if (is_elf_o && strcmp(s->name, "sb_elf_scan_buf") == 0 && s->defined &&
		    s->bind == STB_GLOBAL && s->type == STT_FUNC)
			x->elf_def = true;
		if (is_elf_o && strcmp(s->name, "sb_xcalloc") == 0 && !s->defined)
			x->elf_undef = true;
	}
	for (size_t i = 0; i < obj->nneeded; i++)
		if (strcmp(obj->needed[i], "libc.so.6") == 0)
			x->libc_needed = true;
	return 0;
}

START_TEST(test_self)
{
	char *self = realpath("/proc/self/exe", NULL), *copy;
	struct real x = { 0 };
	struct sb_error *err = NULL;
	int dfd;

	ck_assert_ptr_nonnull(self);
	copy = sb_xstrdup(self);
	dfd = open(dirname(self), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	ck_assert_msg(sb_elf_scan_file_at(dfd, basename(copy), real_cb, &x, &err) == 1, "%s",
	    sb_error_message(err));
	ck_assert_int_eq(x.kind, SB_ELF_EXECUTABLE);
	ck_assert(x.undefined_dynsym);
#ifdef __GLIBC__
	ck_assert(x.libc_needed);
#endif
	if (x.has_symtab)
		ck_assert(x.main_defined);
	else
		fprintf(stderr, "test-elf: %s is stripped, not looking for main\n", copy);
	close(dfd);
	free(self);
	free(copy);
}
END_TEST

START_TEST(test_libsb_archive)
{
	const char *b = getenv("SB_BUILDDIR");
	char *dir = sb_xasprintf("%s/src/libsb", b != NULL && *b != '\0' ? b : ".");
	struct real x = { 0 };
	struct sb_error *err = NULL;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (dfd < 0 || faccessat(dfd, "libsb.a", R_OK, 0) < 0) {
		/* Not a failure: run outside the build tree, there is nothing to look at. */
		fprintf(stderr, "test-elf: no %s/libsb.a (set SB_BUILDDIR), skipping\n", dir);
		if (dfd >= 0)
			close(dfd);
		free(dir);
		return;
	}
	rc = sb_elf_scan_file_at(dfd, "libsb.a", real_cb, &x, &err);
	ck_assert_msg(rc > 10, "%d: %s", rc, sb_error_message(err));
	ck_assert_int_eq(x.objects, rc);
	ck_assert_int_eq(x.kind, SB_ELF_RELOCATABLE);
	ck_assert(x.elf_o && x.elf_def && x.elf_undef);
	close(dfd);
	free(dir);
}
END_TEST

static Suite *
elf_suite(void)
{
	Suite *s = suite_create("elf");
	TCase *tc = tcase_create("images");
	TCase *ar = tcase_create("archives");
	TCase *fs = tcase_create("files");

	tcase_add_loop_test(tc, test_image_exact, 0, (int)SB_ARRAY_SIZE(classes));
	tcase_add_loop_test(tc, test_kinds, 0, (int)SB_ARRAY_SIZE(kinds));
	tcase_add_test(tc, test_no_section_headers);
	tcase_add_loop_test(tc, test_truncated_everywhere, 0, (int)SB_ARRAY_SIZE(classes));
	tcase_add_loop_test(tc, test_damaged_sections, 0, 2 * (int)SB_ARRAY_SIZE(damages));
	tcase_add_loop_test(tc, test_damaged_header, 0, 2 * (int)SB_ARRAY_SIZE(header_damages));
	tcase_add_test(tc, test_header_misc);
	tcase_add_loop_test(tc, test_bad_names_skipped, 0, 2);
	tcase_add_test(tc, test_long_name);
	tcase_add_loop_test(tc, test_symbol_cap, 0, 2);
	tcase_add_test(tc, test_needed_cap);
	tcase_add_test(tc, test_callback_stops);
	tcase_add_loop_test(tc, test_sniff, 0, (int)SB_ARRAY_SIZE(sniffs));
	tcase_add_test(tc, test_not_elf);
	/* The 1M-symbol images take a moment under the sanitizers. */
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tcase_add_test(ar, test_archive);
	tcase_add_test(ar, test_archive_truncated_everywhere);
	tcase_add_loop_test(ar, test_archive_hostile, 0, (int)SB_ARRAY_SIZE(bad_members));
	tcase_add_test(ar, test_archive_misc);
	tcase_add_test(ar, test_archive_members_cap);
	tcase_set_timeout(ar, 60);
	suite_add_tcase(s, ar);

	tcase_add_checked_fixture(fs, setup, teardown);
	tcase_add_loop_test(fs, test_scan_file_at, 0, 2 * (int)SB_ARRAY_SIZE(files));
	tcase_add_test(fs, test_self);
	tcase_add_test(fs, test_libsb_archive);
	suite_add_tcase(s, fs);
	return s;
}

SB_UNIT_MAIN(elf_suite)

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * elf.c: the symbols and DT_NEEDED entries of ELF files and ar archives, from hostile bytes.
 *
 * Fields are read one byte at a time in the file's byte order, never by casting the buffer
 * to a struct (an archive member starts at any even offset, and the host's order may
 * differ). Every offset and size is checked with in_file() before anything at it is read,
 * in 64-bit arithmetic that cannot wrap; every loop runs over a count that was first shown
 * to fit in the file, and is also capped by the SB_ELF_* limits, so one object costs at most
 * about its size plus SB_ELF_SYMBOLS_MAX * SB_ELF_NAME_MAX bytes of string checks (a few
 * milliseconds: the bounded memchr runs over cache-hot bytes).
 * Layouts are those of the System V gABI (ELF) and of the ar format GNU binutils writes.
 */
#include "config.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "sb/elf.h"
#include "sb/fs.h"
#include "sb/limits.h"
#include "sb/mem.h"

#ifndef DF_1_PIE
#define DF_1_PIE 0x08000000 /* older <elf.h> */
#endif

#define AR_MAGIC_LEN 8
#define AR_HDR_LEN   60

/* One ELF image (a file or an archive member) and how to read its fields. */
struct image {
	const unsigned char *p;
	size_t len;
	bool is64;
	bool be;
	uint64_t shoff; /* section header table, already checked to fit in the file */
	uint64_t shnum;
	size_t shentsize;
};

/* The fields of a section header this reader uses. */
struct section {
	uint32_t type;
	uint64_t offset;
	uint64_t size;
	uint32_t link;
	uint32_t info;
	uint64_t entsize;
};

/* A table of fixed-size entries (symbols, dynamic tags) and the string table it names. */
struct table {
	const unsigned char *data;
	uint64_t count;
	size_t entsize;
	const char *str;
	uint64_t strsz;
};

/* What one object collects before the callback. */
struct collect {
	struct sb_elf_symbol *syms;
	size_t nsyms;
	size_t cap;
	uint64_t examined; /* entries read, against SB_ELF_SYMBOLS_MAX */
	const char **needed;
	size_t nneeded;
	size_t needed_cap;
	size_t nskipped;
	bool truncated;
	bool has_soname;
	uint64_t flags_1;
};

enum sb_elf_file_type
sb_elf_sniff(const void *data, size_t len)
{
	const unsigned char *p = data;

	if (len >= SELFMAG && memcmp(p, ELFMAG, SELFMAG) == 0)
		return SB_ELF_FILE_ELF;
	if (len >= AR_MAGIC_LEN && memcmp(p, "!<arch>\n", AR_MAGIC_LEN) == 0)
		return SB_ELF_FILE_ARCHIVE;
	if (len >= AR_MAGIC_LEN && memcmp(p, "!<thin>\n", AR_MAGIC_LEN) == 0)
		return SB_ELF_FILE_THIN_ARCHIVE;
	return SB_ELF_FILE_NONE;
}

static uint16_t
rd16(const struct image *im, const unsigned char *q)
{
	return im->be ? (uint16_t)(q[0] << 8 | q[1]) : (uint16_t)(q[1] << 8 | q[0]);
}

static uint32_t
rd32(const struct image *im, const unsigned char *q)
{
	if (im->be)
		return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
	return (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
}

static uint64_t
rd64(const struct image *im, const unsigned char *q)
{
	uint64_t hi = rd32(im, im->be ? q : q + 4), lo = rd32(im, im->be ? q + 4 : q);

	return hi << 32 | lo;
}

/* An address-sized field (Elf32_Off / Elf64_Off, ...): 4 bytes at off32 or 8 at off64. */
static uint64_t
rd_word(const struct image *im, const unsigned char *rec, size_t off32, size_t off64)
{
	return im->is64 ? rd64(im, rec + off64) : rd32(im, rec + off32);
}

/* True if [off, off + size) lies inside a buffer of len bytes; cannot overflow. */
static bool
in_file(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= (uint64_t)len - off;
}

/* True if n entries of entsize bytes from off fit inside len bytes (entsize > 0). */
static bool
array_in_file(uint64_t off, uint64_t n, uint64_t entsize, size_t len)
{
	return off <= len && n <= ((uint64_t)len - off) / entsize;
}

/* Section i, which the caller has checked is below im->shnum. */
static void
read_section(const struct image *im, uint64_t i, struct section *s)
{
	const unsigned char *q = im->p + im->shoff + i * im->shentsize;

	s->type = rd32(im, q + 4);
	s->offset = rd_word(im, q, 16, 24);
	s->size = rd_word(im, q, 20, 32);
	s->link = rd32(im, q + (im->is64 ? 40 : 24));
	s->info = rd32(im, q + (im->is64 ? 44 : 28));
	s->entsize = rd_word(im, q, 36, 56);
}

/*
 * Check e_ident and the ELF header, and locate the section header table: set im->shoff,
 * shnum (0 when there is none) and shentsize. Extended numbering (e_shnum 0 with the
 * real count in section 0's sh_size) is followed, then the whole table must fit.
 */
static int
read_header(struct image *im, unsigned *ret_type, unsigned *ret_machine, struct sb_error **err)
{
	const unsigned char *p = im->p;
	size_t ehsize;
	uint16_t shentsize, shnum;
	uint64_t shoff;

	if (im->len < EI_NIDENT)
		return sb_error_set(err, EINVAL, "ELF identification truncated");
	if (p[EI_CLASS] != ELFCLASS32 && p[EI_CLASS] != ELFCLASS64)
		return sb_error_set(err, EINVAL, "unknown ELF class %u", p[EI_CLASS]);
	if (p[EI_DATA] != ELFDATA2LSB && p[EI_DATA] != ELFDATA2MSB)
		return sb_error_set(err, EINVAL, "unknown ELF data encoding %u", p[EI_DATA]);
	if (p[EI_VERSION] != EV_CURRENT)
		return sb_error_set(err, EINVAL, "unknown ELF version %u", p[EI_VERSION]);
	im->is64 = p[EI_CLASS] == ELFCLASS64;
	im->be = p[EI_DATA] == ELFDATA2MSB;
	ehsize = im->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	/* Everything below reads fixed offsets of the header: all of it must be there. */
	if (im->len < ehsize)
		return sb_error_set(err, EINVAL, "ELF header truncated (%zu bytes)", im->len);

	*ret_type = rd16(im, p + 16);
	*ret_machine = rd16(im, p + 18);
	shoff = rd_word(im, p, 32, 40);
	shentsize = rd16(im, p + (im->is64 ? 58 : 46));
	shnum = rd16(im, p + (im->is64 ? 60 : 48));
	im->shoff = 0;
	im->shnum = 0;
	im->shentsize = im->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	if (shoff == 0) {
		/* No table (sstrip does this): a count without one is inconsistent. */
		if (shnum != 0)
			return sb_error_set(err, EINVAL, "%u sections but no section header table",
			    shnum);
		return 0;
	}
	/* A different entry size would make us read every header at the wrong place. */
	if (shentsize != im->shentsize)
		return sb_error_set(err, EINVAL, "section header size %u, expected %zu", shentsize,
		    im->shentsize);
	/* Section 0 is read before the count is known (extended numbering): it must fit. */
	if (!in_file(shoff, im->shentsize, im->len))
		return sb_error_set(err, EINVAL, "section header table past the end of the file");
	im->shoff = shoff;
	if (shnum == 0) {
		struct section s0;

		read_section(im, 0, &s0);
		im->shnum = s0.size;
	} else {
		im->shnum = shnum;
	}
	/* Never trust the count: the whole table must be inside the file. */
	if (!array_in_file(shoff, im->shnum, im->shentsize, im->len))
		return sb_error_set(err, EINVAL, "section header table past the end of the file");
	return 0;
}

/*
 * Load section idx as a table of entsize-byte entries with its linked string table. The
 * entry size must be exact (a wrong one would misread every entry), the size a multiple
 * of it, both sections inside the file, and sh_link a valid index of a SHT_STRTAB.
 */
static int
load_table(const struct image *im, uint64_t idx, size_t entsize, const char *what,
    struct table *t, struct sb_error **err)
{
	struct section s, str;

	read_section(im, idx, &s);
	if (s.entsize != entsize)
		return sb_error_set(err, EINVAL, "%s entry size %llu, expected %zu", what,
		    (unsigned long long)s.entsize, entsize);
	if (s.size % entsize != 0)
		return sb_error_set(err, EINVAL, "%s size %llu is not a multiple of %zu", what,
		    (unsigned long long)s.size, entsize);
	if (!in_file(s.offset, s.size, im->len))
		return sb_error_set(err, EINVAL, "%s past the end of the file", what);
	if (s.link >= im->shnum)
		return sb_error_set(err, EINVAL, "%s links to section %u of %llu", what, s.link,
		    (unsigned long long)im->shnum);
	read_section(im, s.link, &str);
	if (str.type != SHT_STRTAB)
		return sb_error_set(err, EINVAL,
		    "%s links to section %u, which is not a string table", what, s.link);
	if (!in_file(str.offset, str.size, im->len))
		return sb_error_set(err, EINVAL, "string table of the %s past the end of the file",
		    what);
	t->data = im->p + s.offset;
	t->count = s.size / entsize;
	t->entsize = entsize;
	t->str = (const char *)im->p + str.offset;
	t->strsz = str.size;
	return 0;
}

/*
 * The string at off in t's string table, or NULL if off is past the table or no NUL ends
 * the name inside the table within SB_ELF_NAME_MAX bytes. The bounded memchr keeps the
 * cost of a symbol constant even when all of them point into one huge unterminated run.
 */
static const char *
name_at(const struct table *t, uint64_t off)
{
	uint64_t avail;

	if (off >= t->strsz)
		return NULL;
	avail = t->strsz - off;
	if (avail > SB_ELF_NAME_MAX + 1)
		avail = SB_ELF_NAME_MAX + 1;
	if (memchr(t->str + off, '\0', (size_t)avail) == NULL)
		return NULL;
	return t->str + off;
}

/* Add the symbols of t (entry 0, the null symbol, left out) to c. */
static void
collect_symbols(const struct image *im, const struct table *t, bool dynamic, struct collect *c)
{
	for (uint64_t i = 1; i < t->count; i++) {
		const unsigned char *q = t->data + i * t->entsize;
		struct sb_elf_symbol *sym;
		unsigned char info;
		uint16_t shndx;
		uint32_t st_name;
		const char *name;

		/* The cap counts entries read, not kept, so skipped ones cost too. */
		if (c->examined >= SB_ELF_SYMBOLS_MAX || c->nsyms >= c->cap) {
			c->truncated = true;
			return;
		}
		c->examined++;
		st_name = rd32(im, q);
		info = q[im->is64 ? 4 : 12];
		shndx = rd16(im, q + (im->is64 ? 6 : 14));
		if (st_name == 0)
			continue; /* unnamed: section and file symbols, nothing to report */
		name = name_at(t, st_name);
		if (name == NULL) {
			c->nskipped++;
			continue;
		}
		if (*name == '\0')
			continue;
		sym = &c->syms[c->nsyms++];
		sym->name = name;
		sym->defined = shndx != SHN_UNDEF;
		sym->dynamic = dynamic;
		sym->bind = (unsigned char)(info >> 4);
		sym->type = (unsigned char)(info & 0xf);
	}
}

/* DT_NEEDED names, DT_SONAME and DT_FLAGS_1 from the dynamic table t, up to DT_NULL. */
static void
collect_dynamic(const struct image *im, const struct table *t, struct collect *c)
{
	for (uint64_t i = 0; i < t->count; i++) {
		const unsigned char *q = t->data + i * t->entsize;
		uint64_t tag = rd_word(im, q, 0, 0), val = rd_word(im, q, 4, 8);
		const char *name;

		if (tag == DT_NULL)
			break;
		if (tag == DT_SONAME)
			c->has_soname = true;
		else if (tag == DT_FLAGS_1)
			c->flags_1 = val;
		if (tag != DT_NEEDED)
			continue;
		name = name_at(t, val);
		if (name == NULL)
			c->nskipped++;
		else if (c->nneeded >= c->needed_cap)
			c->truncated = true;
		else if (*name != '\0')
			c->needed[c->nneeded++] = name;
	}
}

/*
 * Whether the program headers have a PT_INTERP (for telling a PIE from a library). The
 * count may be PN_XNUM, with the real one in section 0's sh_info.
 */
static int
find_interp(const struct image *im, bool *ret, struct sb_error **err)
{
	const unsigned char *p = im->p;
	uint64_t phoff = rd_word(im, p, 28, 32), phnum = rd16(im, p + (im->is64 ? 56 : 44));
	size_t phentsize = rd16(im, p + (im->is64 ? 54 : 42));
	size_t want = im->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);

	*ret = false;
	if (phoff == 0 || phnum == 0)
		return 0;
	if (phnum == PN_XNUM) {
		struct section s0;

		if (im->shnum == 0)
			return sb_error_set(err, EINVAL, "PN_XNUM without a section header table");
		read_section(im, 0, &s0);
		phnum = s0.info;
	}
	if (phentsize != want)
		return sb_error_set(err, EINVAL, "program header size %zu, expected %zu", phentsize,
		    want);
	if (!array_in_file(phoff, phnum, want, im->len))
		return sb_error_set(err, EINVAL, "program header table past the end of the file");
	for (uint64_t i = 0; i < phnum; i++) {
		if (rd32(im, p + phoff + i * want) == PT_INTERP) {
			*ret = true;
			break;
		}
	}
	return 0;
}

static enum sb_elf_kind
kind_of(unsigned type, const struct collect *c, bool interp)
{
	switch (type) {
	case ET_REL:
		return SB_ELF_RELOCATABLE;
	case ET_EXEC:
		return SB_ELF_EXECUTABLE;
	case ET_DYN:
		/* Linkers mark a PIE with DF_1_PIE; older ones leave an interpreter, no soname. */
		if ((c->flags_1 & DF_1_PIE) != 0 || (interp && !c->has_soname))
			return SB_ELF_EXECUTABLE;
		return SB_ELF_SHARED;
	default:
		return SB_ELF_CORE_OR_OTHER;
	}
}

/* An image's symbol tables and dynamic section, each at most once. */
struct tables {
	struct table symtab, dynsym, dyn;
	bool have_symtab, have_dynsym, have_dyn;
};

static int
load_tables(const struct image *im, struct tables *tt, struct sb_error **err)
{
	size_t symsz = im->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	size_t dynsz = im->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);

	for (uint64_t i = 0; i < im->shnum; i++) {
		struct section s;
		struct table *t;
		const char *what;
		bool *seen;
		size_t entsize;

		read_section(im, i, &s);
		if (s.type == SHT_SYMTAB) {
			t = &tt->symtab;
			seen = &tt->have_symtab;
			what = "symbol table";
			entsize = symsz;
		} else if (s.type == SHT_DYNSYM) {
			t = &tt->dynsym;
			seen = &tt->have_dynsym;
			what = "dynamic symbol table";
			entsize = symsz;
		} else if (s.type == SHT_DYNAMIC) {
			t = &tt->dyn;
			seen = &tt->have_dyn;
			what = "dynamic section";
			entsize = dynsz;
		} else {
			continue;
		}
		/* The gABI allows one of each; a second could hide symbols from one reader. */
		if (*seen)
			return sb_error_set(err, EINVAL, "more than one %s", what);
		*seen = true;
		if (load_table(im, i, entsize, what, t, err) < 0)
			return -1;
	}
	return 0;
}

/*
 * Parse one ELF image and call cb with what it holds. Returns -1 with *err set if the image
 * is malformed, else 0 with *ret_cb set to the callback's value.
 */
static int
scan_elf(const unsigned char *p, size_t len, const char *member, sb_elf_object_cb cb, void *arg,
    int *ret_cb, struct sb_error **err)
{
	struct image im = { .p = p, .len = len };
	struct collect c = { 0 };
	struct sb_elf_object obj = { 0 };
	struct tables tt = { 0 };
	bool interp = false;
	_cleanup_free_ struct sb_elf_symbol *syms = NULL;
	_cleanup_free_ const char **needed = NULL;
	unsigned type = 0, machine = 0;
	uint64_t nsyms;

	if (read_header(&im, &type, &machine, err) < 0 || load_tables(&im, &tt, err) < 0)
		return -1;
	if (type == ET_DYN && find_interp(&im, &interp, err) < 0)
		return -1;

	/* Counts were checked against the file; the cap bounds the array in any case. */
	nsyms = (tt.symtab.count > 0 ? tt.symtab.count - 1 : 0) +
		(tt.dynsym.count > 0 ? tt.dynsym.count - 1 : 0);
	c.cap = nsyms < SB_ELF_SYMBOLS_MAX ? (size_t)nsyms : SB_ELF_SYMBOLS_MAX;
	if (c.cap > 0)
		c.syms = syms = sb_xcalloc(c.cap, sizeof(*syms));
	c.needed_cap = tt.dyn.count < SB_ELF_NEEDED_MAX ? (size_t)tt.dyn.count : SB_ELF_NEEDED_MAX;
	if (c.needed_cap > 0)
		c.needed = needed = sb_xcalloc(c.needed_cap, sizeof(*needed));
	collect_symbols(&im, &tt.symtab, false, &c);
	collect_symbols(&im, &tt.dynsym, true, &c);
	collect_dynamic(&im, &tt.dyn, &c);

	obj.member = member;
	obj.kind = kind_of(type, &c, interp);
	obj.machine = machine;
	obj.is64 = im.is64;
	obj.big_endian = im.be;
	obj.has_symtab = tt.have_symtab;
	obj.has_dynsym = tt.have_dynsym;
	obj.symbols = c.nsyms > 0 ? c.syms : NULL;
	obj.nsymbols = c.nsyms;
	obj.needed = c.nneeded > 0 ? c.needed : NULL;
	obj.nneeded = c.nneeded;
	obj.nskipped = c.nskipped;
	obj.truncated = c.truncated;
	*ret_cb = cb != NULL ? cb(&obj, arg) : 0;
	return 0;
}

/*
 * Parse a decimal number of n bytes: at least one digit, then only spaces to the end (the
 * ar header's padding). At most 16 digits are looked at, so it cannot overflow.
 */
static bool
parse_dec(const unsigned char *f, size_t n, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < n && i < 16 && f[i] >= '0' && f[i] <= '9')
		v = v * 10 + (uint64_t)(f[i++] - '0');
	if (i == 0)
		return false;
	for (; i < n; i++)
		if (f[i] != ' ')
			return false;
	*ret = v;
	return true;
}

/* True if the 16-byte name field is s followed only by spaces. */
static bool
name_field_is(const unsigned char *h, const char *s)
{
	size_t n = strlen(s);

	if (memcmp(h, s, n) != 0)
		return false;
	for (size_t i = n; i < 16; i++)
		if (h[i] != ' ')
			return false;
	return true;
}

enum ar_member { AR_SKIP, AR_NAMES, AR_NAMED };

/*
 * Classify the member at header h and work out its name: the GNU symbol tables ("/",
 * "/SYM64/") are AR_SKIP, the long-name table ("//") AR_NAMES; otherwise *ret_name gets a
 * malloc'd name ("/N" is looked up in names; BSD "#1/len" takes len bytes from the data,
 * which *data and *dlen then skip).
 */
static int
ar_member_name(const unsigned char *h, const unsigned char **data, uint64_t *dlen,
    const unsigned char *names, size_t names_len, enum ar_member *ret, char **ret_name,
    struct sb_error **err)
{
	uint64_t v;
	size_t n;

	if (name_field_is(h, "/") || name_field_is(h, "/SYM64/")) {
		*ret = AR_SKIP;
		return 0;
	}
	if (name_field_is(h, "//")) {
		*ret = AR_NAMES;
		return 0;
	}
	*ret = AR_NAMED;
	if (h[0] == '/' && h[1] >= '0' && h[1] <= '9') {
		const unsigned char *s;
		size_t avail;

		if (!parse_dec(h + 1, 15, &v))
			return sb_error_set(err, EINVAL, "bad long name reference");
		if (names == NULL)
			return sb_error_set(err, EINVAL, "long name without a long-name table");
		/* The offset comes from the hostile header: it must land inside the table. */
		if (v >= names_len)
			return sb_error_set(err, EINVAL,
			    "long name offset %llu past the %zu-byte table", (unsigned long long)v,
			    names_len);
		s = names + v;
		avail = names_len - (size_t)v;
		/* GNU ends a name with "/\n", others with NUL; look no further than a path. */
		for (n = 0; n < avail && n <= SB_PATH_MAX && s[n] != '\n' && s[n] != '\0'; n++)
			;
		if (n > SB_PATH_MAX)
			return sb_error_set(err, EINVAL, "long member name over %d bytes",
			    SB_PATH_MAX);
		if (n == avail)
			return sb_error_set(err, EINVAL, "unterminated long member name");
		if (n > 0 && s[n - 1] == '/')
			n--;
		*ret_name = sb_xstrndup((const char *)s, n);
		return 0;
	}
	if (memcmp(h, "#1/", 3) == 0) {
		if (!parse_dec(h + 3, 13, &v))
			return sb_error_set(err, EINVAL, "bad BSD name length");
		/* The name is part of the member's data, so it must fit in it. */
		if (v > *dlen)
			return sb_error_set(err, EINVAL,
			    "BSD name of %llu bytes in a %llu-byte member", (unsigned long long)v,
			    (unsigned long long)*dlen);
		if (v > SB_PATH_MAX)
			return sb_error_set(err, EINVAL, "BSD member name over %d bytes",
			    SB_PATH_MAX);
		*ret_name = sb_xstrndup((const char *)*data, (size_t)v); /* NUL padding cut */
		*data += v;
		*dlen -= v;
		return 0;
	}
	/* A short name: GNU ends it with '/', BSD pads it with spaces. */
	n = 16;
	if (h[0] != '/') {
		const unsigned char *slash = memchr(h, '/', 16);

		if (slash != NULL)
			n = (size_t)(slash - h);
	}
	while (n > 0 && h[n - 1] == ' ')
		n--;
	*ret_name = sb_xstrndup((const char *)h, n);
	return 0;
}

/* Prefix *err with the member's name, escaped: it is bytes the build chose. */
static int
member_error(struct sb_error **err, const char *name)
{
	_cleanup_free_ char *esc = sb_escape(name);

	return sb_error_prefix(err, "member '%s'", esc);
}

/*
 * Walk an ar archive and scan each ELF member. Returns the number of callbacks, or -1 with
 * *err set, or the callback's negative value with *ret_stopped set.
 */
static int
scan_archive(const unsigned char *p, size_t len, sb_elf_object_cb cb, void *arg,
    bool *ret_stopped, struct sb_error **err)
{
	const unsigned char *names = NULL;
	size_t names_len = 0, pos = AR_MAGIC_LEN, nmembers = 0;
	int nobj = 0;

	while (pos < len) {
		_cleanup_free_ char *name = NULL;
		const unsigned char *h = p + pos, *data;
		enum ar_member what;
		uint64_t size;
		size_t end;
		int rc;

		if (len - pos < AR_HDR_LEN)
			return sb_error_set(err, EINVAL, "member header at offset %zu truncated",
			    pos);
		/* Each member costs a callback and a name: bound them, not just the bytes. */
		if (++nmembers > SB_ELF_MEMBERS_MAX)
			return sb_error_set(err, EFBIG, "more than %d archive members",
			    SB_ELF_MEMBERS_MAX);
		if (h[58] != 0x60 || h[59] != '\n')
			return sb_error_set(err, EINVAL,
			    "member header at offset %zu: bad terminator", pos);
		if (!parse_dec(h + 48, 10, &size))
			return sb_error_set(err, EINVAL,
			    "member header at offset %zu: bad size field", pos);
		/* The size is the hostile header's claim: the data must be inside the file. */
		if (size > len - pos - AR_HDR_LEN)
			return sb_error_set(err, EINVAL,
			    "member at offset %zu: %llu bytes, past the end of the file", pos,
			    (unsigned long long)size);
		data = h + AR_HDR_LEN;
		end = pos + AR_HDR_LEN + (size_t)size;
		/* Members start at even offsets; the last pad byte may be missing. */
		pos = end + (end & 1);
		if (pos > len)
			pos = len;

		if (ar_member_name(h, &data, &size, names, names_len, &what, &name, err) < 0)
			return sb_error_prefix(err, "member header at offset %zu",
			    (size_t)(h - p));
		if (what == AR_SKIP)
			continue;
		if (what == AR_NAMES) {
			/* A second table could rename members already seen: refuse it. */
			if (names != NULL)
				return sb_error_set(err, EINVAL, "second long-name table");
			names = data;
			names_len = (size_t)size;
			continue;
		}
		if (sb_elf_sniff(data, (size_t)size) != SB_ELF_FILE_ELF)
			continue;
		if (scan_elf(data, (size_t)size, name, cb, arg, &rc, err) < 0)
			return member_error(err, name);
		if (rc < 0) {
			*ret_stopped = true;
			return rc;
		}
		nobj++;
	}
	return nobj;
}

/* sb_elf_scan_buf, telling the callback's stop (*ret_stopped) from an error. */
static int
scan_any(const void *data, size_t len, sb_elf_object_cb cb, void *arg, bool *ret_stopped,
    struct sb_error **err)
{
	int rc;

	*ret_stopped = false;
	if (len > SB_ELF_FILE_MAX)
		return sb_error_set(err, EFBIG, "%zu bytes, more than %zu", len,
		    (size_t)SB_ELF_FILE_MAX);
	switch (sb_elf_sniff(data, len)) {
	case SB_ELF_FILE_ELF:
		if (scan_elf(data, len, NULL, cb, arg, &rc, err) < 0)
			return -1;
		if (rc < 0) {
			*ret_stopped = true;
			return rc;
		}
		return 1;
	case SB_ELF_FILE_ARCHIVE:
		return scan_archive(data, len, cb, arg, ret_stopped, err);
	case SB_ELF_FILE_THIN_ARCHIVE:
		/* Its members are paths to other files, which a buffer scan cannot follow. */
		return sb_error_set(err, EINVAL, "thin archive: its members are separate files");
	case SB_ELF_FILE_NONE:
		break;
	}
	return sb_error_set(err, EINVAL, "neither an ELF file nor an ar archive");
}

int
sb_elf_scan_buf(const void *data, size_t len, sb_elf_object_cb cb, void *arg,
    struct sb_error **err)
{
	bool stopped;

	return scan_any(data, len, cb, arg, &stopped, err);
}

int
sb_elf_scan_file_at(int dirfd, const char *name, sb_elf_object_cb cb, void *arg,
    struct sb_error **err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ unsigned char *buf = NULL;
	_cleanup_free_ char *esc = NULL;
	struct stat st;
	size_t size, got = 0;
	bool stopped;
	int r;

	/*
	 * The build's tree is the agent's: no symbolic link at all (not even one that stays
	 * inside), and O_NONBLOCK so that opening a planted FIFO returns at once; it is then
	 * refused as not regular, before any read could block.
	 */
	fd = sb_open_beneath(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, SB_OPEN_NO_SYMLINKS,
	    err);
	if (fd < 0)
		return -1;
	esc = sb_escape(name);
	if (fstat(fd, &st) < 0)
		return sb_error_errno(err, errno, "stat '%s'", esc);
	if (!S_ISREG(st.st_mode))
		return sb_error_set(err, EINVAL, "'%s' is not a regular file", esc);
	if ((unsigned long long)st.st_size > SB_ELF_FILE_MAX)
		return sb_error_set(err, EFBIG, "'%s' is larger than %zu bytes", esc,
		    (size_t)SB_ELF_FILE_MAX);
	/* One exact allocation: a growing buffer would need twice the memory at the end. */
	size = (size_t)st.st_size;
	buf = sb_xmalloc(size);
	while (got < size) {
		ssize_t n = SB_RETRY_EINTR(read(fd, buf + got, size - got));

		if (n < 0)
			return sb_error_errno(err, errno, "read '%s'", esc);
		if (n == 0)
			break; /* it shrank meanwhile: scan what is there */
		got += (size_t)n;
	}
	/* Bytes appended after fstat are not read, so the size cap holds. */
	r = scan_any(buf, got, cb, arg, &stopped, err);
	if (r < 0 && !stopped)
		return sb_error_prefix(err, "'%s'", esc);
	return r;
}

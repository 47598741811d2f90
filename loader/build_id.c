/* ELF Build-ID and hid.
 *
 * The file is read whole into memory and checked by hand before libelf is asked for anything
 * beyond the ELF header: every table offset, entry size and count is checked against the file
 * size, and every note is walked with explicit bounds, so a truncated or hostile file yields a
 * status naming what is wrong, never a read past the buffer. libelf does the class and
 * byte-order translation of the headers. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader_internal.h"
#include "pto/base.h"

uint64_t pto_hid_from_build_id(const uint8_t *id, size_t len) {
  uint64_t h = 0;
  if (!id) return 0;
  for (size_t i = 0; i < len && i < 8; i++)
    h |= (uint64_t)id[i] << (8 * i);
  return h;
}

void pto_hid_format(uint64_t hid, char buf[17]) { snprintf(buf, 17, "%" PRIx64, hid); }

/* ---- notes ---------------------------------------------------------------------------- */

static uint32_t rd32(const uint8_t *p, int msb) {
  return msb ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
             : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Rounds x up to a multiple of a (a power of two); false on overflow past limit. */
static int align_up(uint64_t x, uint64_t a, uint64_t *out) {
  uint64_t r = (x + (a - 1)) & ~(a - 1);
  if (r < x) return 0;
  *out = r;
  return 1;
}

enum { NOTE_NONE = 0, NOTE_FOUND = 1, NOTE_BAD = 2 };

/* Walks the notes of one note area [p, p+len) aligned to align (4 or 8). Returns NOTE_FOUND
 * with the Build-ID copied out, NOTE_NONE, or NOTE_BAD with why filled in. */
static int find_build_id_note(const uint8_t *p, uint64_t len, uint64_t align, int msb,
                              uint8_t out_id[64], size_t *out_len, char *why, size_t whylen) {
  uint64_t off = 0;
  while (off <= len && len - off >= 12) {
    uint32_t namesz = rd32(p + off, msb), descsz = rd32(p + off + 4, msb),
             type = rd32(p + off + 8, msb);
    uint64_t name_off = off + 12, desc_off, next;
    if (namesz > len - name_off || !align_up(name_off + namesz, align, &desc_off) ||
        desc_off > len || descsz > len - desc_off) {
      snprintf(why, whylen,
               "note at offset %" PRIu64 " (name %" PRIu32 " bytes, desc %" PRIu32
               " bytes) runs past its %" PRIu64 "-byte area",
               off, namesz, descsz, len);
      return NOTE_BAD;
    }
    if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name_off, "GNU", 4) == 0) {
      if (descsz == 0 || descsz > 64) {
        snprintf(why, whylen, "GNU Build-ID note has %" PRIu32 " bytes (expected 1..64)", descsz);
        return NOTE_BAD;
      }
      memcpy(out_id, p + desc_off, descsz);
      *out_len = descsz;
      return NOTE_FOUND;
    }
    if (!align_up(desc_off + descsz, align, &next) || next <= off) break;
    off = next;
  }
  return NOTE_NONE;
}

static pthread_once_t g_elf_once = PTHREAD_ONCE_INIT; /* libelf's global version handshake */
static int g_elf_ok;
static void elf_init(void) { g_elf_ok = elf_version(EV_CURRENT) != EV_NONE; }

static pto_status bad_elf(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static pto_status bad_elf(const char *name, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return pto_status_make(PTO_STATUS_DATA_LOSS, "%s: malformed ELF file: %s", name, msg);
}

/* True when [off, off + count * entsize) lies within size. */
static int table_fits(uint64_t off, uint64_t count, uint64_t entsize, uint64_t size) {
  if (off > size) return 0;
  if (entsize && count > (size - off) / entsize) return 0;
  return 1;
}

pto_status pto__loader_build_id_mem(const char *name, const uint8_t *buf, size_t size,
                                    uint8_t out_id[64], size_t *out_len) {
  *out_len = 0;
  if (size < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) != 0) {
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: not an ELF file (%s)", name,
                           size < SELFMAG ? "too short" : "no \\x7fELF magic");
  }
  int cls = buf[EI_CLASS], data = buf[EI_DATA];
  if (cls != ELFCLASS32 && cls != ELFCLASS64) return bad_elf(name, "unknown ELF class %d", cls);
  if (data != ELFDATA2LSB && data != ELFDATA2MSB)
    return bad_elf(name, "unknown ELF data encoding %d", data);
  int msb = data == ELFDATA2MSB;
  size_t ehsize = cls == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  size_t shsize = cls == ELFCLASS64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  size_t phsize = cls == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  if (size < ehsize) return bad_elf(name, "truncated ELF header (%zu of %zu bytes)", size, ehsize);

  pthread_once(&g_elf_once, elf_init);
  if (!g_elf_ok) return pto_status_make(PTO_STATUS_INTERNAL, "libelf version mismatch");

  pto_status s = PTO_OK;
  char why[200] = "";
  int found = NOTE_NONE;
  Elf *e = elf_memory((char *)buf, size);
  if (!e || elf_kind(e) != ELF_K_ELF) {
    s = bad_elf(name, "%s", elf_errmsg(-1));
    goto done;
  }
  GElf_Ehdr eh;
  if (!gelf_getehdr(e, &eh)) {
    s = bad_elf(name, "ELF header: %s", elf_errmsg(-1));
    goto done;
  }

  /* Section headers first: the note sections name exactly the note bytes. */
  int had_note_sections = 0;
  if (eh.e_shoff != 0) {
    if (eh.e_shentsize != shsize) {
      s = bad_elf(name, "section header size %u, expected %zu", eh.e_shentsize, shsize);
      goto done;
    }
    if (!table_fits(eh.e_shoff, 1, shsize, size)) {
      s = bad_elf(name,
                  "section header table at offset %" PRIu64
                  " is past the end of the file (%zu bytes)",
                  (uint64_t)eh.e_shoff, size);
      goto done;
    }
    /* The header's own count: libelf quietly reports 0 sections for a table that does not
     * fit. Only extended numbering (e_shnum 0: the count is in section 0) needs libelf. */
    size_t shnum = eh.e_shnum, libelf_shnum = 0;
    if (shnum == 0 && elf_getshdrnum(e, &shnum) != 0) {
      s = bad_elf(name, "section count: %s", elf_errmsg(-1));
      goto done;
    }
    if (!table_fits(eh.e_shoff, shnum, shsize, size)) {
      s = bad_elf(name,
                  "section header table (%zu entries at offset %" PRIu64
                  ") runs past the end of the file (%zu bytes)",
                  shnum, (uint64_t)eh.e_shoff, size);
      goto done;
    }
    if (elf_getshdrnum(e, &libelf_shnum) != 0 || libelf_shnum != shnum) {
      s = bad_elf(name, "section count %zu, but libelf reads %zu", shnum, libelf_shnum);
      goto done;
    }
    for (size_t i = 1; i < shnum && found == NOTE_NONE; i++) {
      Elf_Scn *scn = elf_getscn(e, i);
      GElf_Shdr sh;
      if (!scn || !gelf_getshdr(scn, &sh)) {
        s = bad_elf(name, "section %zu: %s", i, elf_errmsg(-1));
        goto done;
      }
      if (sh.sh_type != SHT_NOTE) continue;
      had_note_sections = 1;
      if (!table_fits(sh.sh_offset, 1, sh.sh_size, size)) {
        s = bad_elf(name,
                    "note section %zu (offset %" PRIu64 ", %" PRIu64
                    " bytes) runs past the end of the file (%zu bytes)",
                    i, (uint64_t)sh.sh_offset, (uint64_t)sh.sh_size, size);
        goto done;
      }
      found = find_build_id_note(buf + sh.sh_offset, sh.sh_size, sh.sh_addralign == 8 ? 8 : 4, msb,
                                 out_id, out_len, why, sizeof why);
    }
  }

  /* No note sections (stripped section headers): the note segments. */
  if (found == NOTE_NONE && !had_note_sections && eh.e_phoff != 0) {
    if (eh.e_phentsize != phsize) {
      s = bad_elf(name, "program header size %u, expected %zu", eh.e_phentsize, phsize);
      goto done;
    }
    size_t phnum = eh.e_phnum, libelf_phnum = 0;
    if (!table_fits(eh.e_phoff, 1, phsize, size) ||
        (phnum == PN_XNUM && elf_getphdrnum(e, &phnum) != 0) ||
        !table_fits(eh.e_phoff, phnum, phsize, size)) {
      s = bad_elf(name,
                  "program header table at offset %" PRIu64
                  " runs past the end of the file (%zu bytes)",
                  (uint64_t)eh.e_phoff, size);
      goto done;
    }
    if (elf_getphdrnum(e, &libelf_phnum) != 0 || libelf_phnum != phnum) {
      s = bad_elf(name, "program header count %zu, but libelf reads %zu", phnum, libelf_phnum);
      goto done;
    }
    for (size_t i = 0; i < phnum && found == NOTE_NONE; i++) {
      GElf_Phdr ph;
      if (!gelf_getphdr(e, (int)i, &ph)) {
        s = bad_elf(name, "program header %zu: %s", i, elf_errmsg(-1));
        goto done;
      }
      if (ph.p_type != PT_NOTE) continue;
      if (!table_fits(ph.p_offset, 1, ph.p_filesz, size)) {
        s = bad_elf(name,
                    "note segment %zu (offset %" PRIu64 ", %" PRIu64
                    " bytes) runs past the end of the file (%zu bytes)",
                    i, (uint64_t)ph.p_offset, (uint64_t)ph.p_filesz, size);
        goto done;
      }
      found = find_build_id_note(buf + ph.p_offset, ph.p_filesz, ph.p_align == 8 ? 8 : 4, msb,
                                 out_id, out_len, why, sizeof why);
    }
  }

  if (found == NOTE_BAD)
    s = bad_elf(name, "%s", why);
  else if (found == NOTE_NONE)
    s = pto_status_make(PTO_STATUS_NOT_FOUND,
                        "%s: no GNU Build-ID note (link with -Wl,--build-id=sha1)", name);
done:
  if (e) elf_end(e);
  if (s) *out_len = 0;
  return s;
}

pto_status pto__loader_hid_mem(const char *name, const uint8_t *buf, size_t size,
                               uint64_t *out_hid) {
  uint8_t id[64];
  size_t len = 0;
  pto_status s = pto__loader_build_id_mem(name, buf, size, id, &len);
  if (!s) {
    *out_hid = pto_hid_from_build_id(id, len);
    return PTO_OK;
  }
  if (pto_status_code_of(s) != PTO_STATUS_NOT_FOUND) return s;
  pto_status_free(s);
  *out_hid = pto_hash_fnv1a64(buf, size);
  return PTO_OK;
}

pto_status pto_elf_build_id(const char *path, uint8_t out_id[64], size_t *out_len) {
  if (!out_id)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_elf_build_id: out_id is NULL");
  if (!out_len)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_elf_build_id: out_len is NULL");
  *out_len = 0;
  uint8_t *buf;
  size_t size;
  PTO_RETURN_IF_ERROR(pto_file_read(path, PTO_FILE_MAX_BINARY, &buf, &size));
  pto_status s = pto__loader_build_id_mem(path, buf, size, out_id, out_len);
  free(buf);
  return s;
}

pto_status pto_elf_hid(const char *path, uint64_t *out_hid) {
  if (!out_hid) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_elf_hid: out_hid is NULL");
  *out_hid = 0;
  uint8_t *buf;
  size_t size;
  PTO_RETURN_IF_ERROR(pto_file_read(path, PTO_FILE_MAX_BINARY, &buf, &size));
  pto_status s = pto__loader_hid_mem(path, buf, size, out_hid);
  free(buf);
  return s;
}

/* ---- the Build-ID of a loaded image --------------------------------------------------- */

struct loaded_query {
  const struct link_map *lm;
  uint8_t *id;
  size_t *len;
  int state;
};

static int loaded_cb(struct dl_phdr_info *info, size_t sz, void *arg) {
  struct loaded_query *q = arg;
  if (info->dlpi_addr != q->lm->l_addr || !info->dlpi_name || !q->lm->l_name ||
      strcmp(info->dlpi_name, q->lm->l_name) != 0)
    return 0;
  char why[200];
  for (int i = 0; i < info->dlpi_phnum && q->state != NOTE_FOUND; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    /* Mapped by the dynamic loader, so the segment is readable memory of p_memsz bytes. */
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    q->state =
        find_build_id_note(p, ph->p_memsz, ph->p_align == 8 ? 8 : 4,
                           __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__, q->id, q->len, why, sizeof why);
  }
  if (q->state == NOTE_BAD) q->state = NOTE_NONE;
  return 1;
}

/* ---- the loader's dl* calls, under one lock (loader_internal.h) ---------------------------- */

static pthread_mutex_t g_dl_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void *pto__loader_dlopen(const char *path, int flags) {
  pthread_mutex_lock(&g_dl_lock);
  void *h = dlopen(path, flags);
  pthread_mutex_unlock(&g_dl_lock);
  return h;
}

int pto__loader_dlclose(void *handle) {
  pthread_mutex_lock(&g_dl_lock);
  int rc = dlclose(handle);
  pthread_mutex_unlock(&g_dl_lock);
  return rc;
}

int pto__loader_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg) {
  pthread_mutex_lock(&g_dl_lock);
  int rc = dl_iterate_phdr(cb, arg);
  pthread_mutex_unlock(&g_dl_lock);
  return rc;
}

pto_status pto__loader_loaded_build_id(void *handle, const char *name, uint8_t out_id[64],
                                       size_t *out_len) {
  *out_len = 0;
  struct link_map *lm = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: cannot query the loaded image: %s", name,
                           dlerror());
  }
  struct loaded_query q = {lm, out_id, out_len, NOTE_NONE};
  pto__loader_dl_iterate_phdr(loaded_cb, &q);
  if (q.state != NOTE_FOUND) {
    return pto_status_make(PTO_STATUS_NOT_FOUND, "%s: the loaded image has no GNU Build-ID note",
                           name);
  }
  return PTO_OK;
}

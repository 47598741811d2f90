/* pto fmt, pto check, pto build-id. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pto/base.h"

/* pwrite of all len bytes at off: 0, or an errno (ENOSPC, EFBIG past `ulimit -f`, EIO). */
static int write_all_at(int fd, const char *p, size_t len, off_t off) {
  while (len) {
    ssize_t w = pwrite(fd, p, len, off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    len -= (size_t)w;
    off += w;
  }
  return 0;
}

/* A file with other hard links, rewritten in place, so that every name of it gets the new text
 * (a rename would give this name a new file and leave the others the old one); its inode, mode,
 * owner, ACLs and extended attributes stay as they are. The old text (old, n bytes: the file as
 * just read) is kept in memory, and the file is never left half written by a failed write: new
 * bytes past the old end are written first (a full disk or `ulimit -f` fails there, and the file
 * is cut back to its old length), then the rest over the old bytes (blocks the file has already),
 * then the file is cut to its new length; a failure after the first step writes the old text
 * back. SIGINT, SIGTERM and SIGHUP wait until it is done. Only a SIGKILL or a crash in those few
 * writes could leave the file mixed, which is why a file of one link is replaced atomically. */
static pto_status rewrite_in_place(const char *path, const char *old, size_t n, const char *text,
                                   size_t len) {
  /* O_NONBLOCK: a FIFO swapped in for the file just read fails here (ENXIO) instead of waiting
   * for a reader; it has no effect on a regular file's writes. */
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return pto_status_make(
        errno == EACCES || errno == EROFS ? PTO_STATUS_INVALID_ARGUMENT : PTO_STATUS_IO,
        "cannot write %s: %s (the old file is unchanged)", path, strerror(errno));
  sigset_t block, was;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &was);
  int err = 0, changed = 0;
  if (len > n) {
    err = write_all_at(fd, text + n, len - n, (off_t)n);
    if (err && ftruncate(fd, (off_t)n) != 0) changed = 1;
  }
  if (!err) {
    changed = 1;
    err = write_all_at(fd, text, len < n ? len : n, 0);
    if (!err && len < n && ftruncate(fd, (off_t)len) != 0) err = errno;
    if (!err && fsync(fd) != 0) err = errno;
  }
  int restored = 0;
  if (err && changed)
    restored = write_all_at(fd, old, n, 0) == 0 && ftruncate(fd, (off_t)n) == 0 && fsync(fd) == 0;
  else
    restored = 1;
  close(fd);
  sigprocmask(SIG_SETMASK, &was, NULL);
  if (!err) return PTO_OK;
  return pto_status_make(PTO_STATUS_IO, "cannot write %s: %s (%s)", path, strerror(err),
                         restored ? "the old file is unchanged"
                                  : "the old text could not be written back either: the file "
                                    "may be damaged");
}

/* Replaces path with text, unless it holds text already: a file in canonical form is not
 * written at all (its mtime, which make and ninja go by, and its hard links stay). A file of one
 * link is replaced atomically (pto_file_replace: its mode, owner and ACLs kept, a symlink's
 * target written); one with other hard links is rewritten in place, keeping them all. */
static pto_status write_formatted(const char *path, const char *text) {
  const void *bufs[1] = {text};
  size_t lens[1] = {strlen(text)};
  uint8_t *old = NULL;
  size_t n = 0;
  struct stat st;
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, &old, &n);
  if (!s && n == lens[0] && !memcmp(old, text, n)) {
    free(old);
    return PTO_OK;
  }
  pto_status_free(s);
  if (old && stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
    if (access(path, W_OK) != 0 && (errno == EACCES || errno == EROFS))
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "cannot write %s: %s (the old file is unchanged)", path, strerror(errno));
    else
      s = rewrite_in_place(path, (const char *)old, n, text, lens[0]);
  } else {
    s = pto_file_replace(path, bufs, lens, 1);
  }
  free(old);
  return s;
}

/* The formatted text must read back with every comment of the source, in order and unchanged:
 * a formatter that loses a user's comment refuses rather than writes. */
static pto_status check_comments(const char *file, const pto_ir_program *p, const char *text) {
  pto_ir_program *back = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), file, &back);
  if (s) {
    pto_status r = pto_status_make(PTO_STATUS_INTERNAL,
                                   "%s: the formatted text does not read back (%s); the file is "
                                   "left untouched, please report this",
                                   file, pto_status_message(s));
    pto_status_free(s);
    return r;
  }
  const pto_ir_source_notes *a = &p->notes, *b = &back->notes;
  for (int i = 0; !s && i < a->ncomments; i++) {
    const pto_ir_comment *c = &a->comments[i];
    if (strlen(c->text) != c->len)
      s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                          "%s:%d: formatting would lose the comment '%s': it holds a NUL byte, "
                          "which the formatted text cannot; remove it (the file is left untouched)",
                          file, c->line, c->text);
    else if (i >= b->ncomments || strcmp(c->text, b->comments[i].text))
      s = pto_status_make(PTO_STATUS_INTERNAL,
                          "%s:%d: formatting would lose the comment '%s'; the file is left "
                          "untouched, please report this",
                          file, c->line, c->text);
  }
  if (!s && b->ncomments != a->ncomments)
    s = pto_status_make(PTO_STATUS_INTERNAL,
                        "%s: formatting would print %d comments where the file has %d; the file "
                        "is left untouched, please report this",
                        file, b->ncomments, a->ncomments);
  pto_ir_program_destroy(back);
  return s;
}

int cmd_fmt(int argc, char **argv) {
  const char *cmd = "fmt";
  int in_place = 0;
  const char *file = NULL;
  int operands = 0; /* after "--", no argument is an option */
  for (int i = 1; i < argc; i++) {
    if (!operands && !strcmp(argv[i], "--"))
      operands = 1;
    else if (!operands && !strcmp(argv[i], "-i"))
      in_place = 1;
    else if (!operands && argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(cmd, "unknown option '%s'", argv[i]);
    else if (!file)
      file = argv[i];
    else
      return cli_usage_error(cmd, "one file at a time: '%s' and '%s'", file, argv[i]);
  }
  if (!file) return cli_usage_error(cmd, "no file given");
  pto_ir_program *p = NULL;
  char *text = NULL;
  pto_status s = pto_ir_parse_file(file, &p);
  if (!s) s = pto_ir_verify(p);
  if (!s) s = pto_ir_format(p, &text);
  if (!s) s = check_comments(file, p, text);
  /* The file is replaced only once the whole new text exists: a bad program is never touched. */
  if (!s && in_place)
    s = write_formatted(file, text);
  else if (!s)
    fputs(text, stdout);
  pto_free(text);
  pto_ir_program_destroy(p);
  return s ? cli_fail(cmd, s) : PTO_EXIT_OK;
}

/* pto check and pto build-id take files only: the command line is checked whole before any file
 * is read, so an unknown option after the files ('pto build-id x.so --json') is refused with
 * nothing printed (a script would otherwise see the first files' output and exit 2). */
static int refuse_options(const char *cmd, int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(cmd, "unknown option '%s'", argv[i]), 1;
  return 0;
}

int cmd_check(int argc, char **argv) {
  const char *cmd = "check";
  int nfiles = 0, nbad = 0, usage = 0, operands = 0;
  if (refuse_options(cmd, argc, argv)) return PTO_EXIT_USAGE;
  for (int i = 1; i < argc; i++) {
    if (!operands && !strcmp(argv[i], "--")) {
      operands = 1;
      continue;
    }
    nfiles++;
    pto_ir_program *p = NULL;
    pto_status s = pto_ir_parse_file(argv[i], &p);
    if (!s) s = pto_ir_verify(p);
    if (!s) cli_launch_warnings(p);
    pto_ir_program_destroy(p);
    if (s) {
      nbad++;
      if (cli_fail(cmd, s) == PTO_EXIT_USAGE) usage = 1;
    }
  }
  if (!nfiles) return cli_usage_error(cmd, "no file given");
  if (nbad) return usage ? PTO_EXIT_USAGE : PTO_EXIT_FAILED;
  return PTO_EXIT_OK;
}

int cmd_build_id(int argc, char **argv) {
  const char *cmd = "build-id";
  int nfiles = 0, rc = PTO_EXIT_OK, operands = 0;
  if (refuse_options(cmd, argc, argv)) return PTO_EXIT_USAGE;
  for (int i = 1; i < argc; i++) {
    if (!operands && !strcmp(argv[i], "--")) {
      operands = 1;
      continue;
    }
    nfiles++;
    uint8_t id[64];
    size_t len = 0;
    uint64_t hid = 0;
    char hex[17];
    pto_status s = pto_elf_build_id(argv[i], id, &len);
    if (s && pto_status_code_of(s) == PTO_STATUS_NOT_FOUND) {
      /* No note: hid falls back to FNV-1a-64 of the whole file. */
      pto_status_free(s);
      s = pto_elf_hid(argv[i], &hid);
      if (!s) {
        pto_hid_format(hid, hex);
        printf("%s: hid=%s build-id=none\n", argv[i], hex);
      }
    } else if (!s) {
      pto_hid_format(pto_hid_from_build_id(id, len), hex);
      printf("%s: hid=%s build-id=", argv[i], hex);
      for (size_t j = 0; j < len; j++)
        printf("%02x", id[j]);
      printf("\n");
    }
    /* A malformed ELF file is bad input, as a file that is no ELF at all (exit 2), not a job
     * that ran and failed. */
    if (s && pto_status_code_of(s) == PTO_STATUS_DATA_LOSS) {
      fprintf(stderr, "pto %s: ", cmd);
      cli_put_message(stderr, pto_status_message(s));
      fputc('\n', stderr);
      pto_status_free(s);
      rc = PTO_EXIT_USAGE;
    } else if (s) {
      rc = cli_fail(cmd, s);
    }
  }
  if (!nfiles) return cli_usage_error(cmd, "no file given");
  return rc;
}

const pto_cmd cli_cmd_fmt = {
    "fmt", "print a .ptir file in canonical form",
    "usage: pto fmt FILE.ptir [-i]\n"
    "\n"
    "Parses and verifies FILE.ptir and prints it in canonical form (the printer's output is a\n"
    "fixed point: formatting twice changes nothing). Comments are kept: a full-line comment stays\n"
    "above what it preceded, at its indentation, an end-of-line comment after its statement; one\n"
    "inside a multi-line expression moves above the next statement. A file with errors, or one\n"
    "whose comments could not all be kept, is reported and left untouched.\n"
    "\n"
    "options:\n"
    "  -i    rewrite FILE.ptir instead of printing to stdout: atomically, by a complete temp\n"
    "        file renamed over it (its mode, owner, ACL and user.* attributes kept); a file\n"
    "        with other hard links is rewritten in place, so every link gets the new text\n"
    "        (the old text put back if a write fails); a read-only file is refused; a file\n"
    "        in canonical form already is not written (its mtime stays)\n"
    "\n"
    "example:\n"
    "  pto fmt -i examples/add.ptir\n",
    cmd_fmt};

const pto_cmd cli_cmd_check = {
    "check", "parse and verify .ptir files",
    "usage: pto check FILE.ptir...\n"
    "\n"
    "Parses and verifies each file against every static rule of PTIR, printing each error as\n"
    "FILE:LINE:COL: message. Exit status 0 when all files are valid, 2 otherwise.\n"
    "\n"
    "example:\n"
    "  pto check examples/*.ptir\n",
    cmd_check};

const pto_cmd cli_cmd_build_id = {
    "build-id", "print the hid and GNU Build-ID of ELF files",
    "usage: pto build-id FILE...\n"
    "\n"
    "Prints, per file, 'FILE: hid=<hex> build-id=<hex>'. hid is the callable identity used in\n"
    "[STRACE] lines: the first 8 bytes of the Build-ID read little-endian, in lowercase hex\n"
    "without padding; a file without a Build-ID note gets FNV-1a-64 of its bytes (build-id=none).\n"
    "\n"
    "example:\n"
    "  pto build-id build/add/orchestration/main.so build/add/kernels/kernels.so\n",
    cmd_build_id};

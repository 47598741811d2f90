#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler_internal.h"

/* The program argv[0] names, found in PATH as execvp would (before the fork: the child of a
 * threaded process may only make async-signal-safe calls, which execvp's search is not). 0, or
 * the errno execvp would give. */
static int find_program(const char *name, char *out, size_t n) {
  if (strchr(name, '/')) return snprintf(out, n, "%s", name) < (int)n ? 0 : ENAMETOOLONG;
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  int err = ENOENT;
  for (const char *p = path;; p++) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (snprintf(out, n, "%.*s%s%s", (int)len, p, len ? "/" : "", name) < (int)n) {
      if (access(out, X_OK) == 0) return 0;
      if (errno == EACCES) err = EACCES;
    }
    if (!end) return err;
    p = end;
  }
}

/* The child's half, between fork and exec (only async-signal-safe calls): dies with the thread
 * that forked it, and reports a failed exec through errfd. */
static void run_child(const char *prog, const char *const *argv, int log_fd, int errfd,
                      pid_t parent) {
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(127);
  int null = open("/dev/null", O_RDONLY);
  if (null < 0 || dup2(null, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0) _exit(127);
  if (null > 2) close(null);
  execv(prog, (char *const *)argv);
  int err = errno;
  ssize_t w = write(errfd, &err, sizeof err);
  (void)w;
  _exit(127);
}

/* The tool's output goes to a temporary file rather than a pipe, so a chatty tool can never
 * block on a full pipe while we are busy with other work (pto__compiler_exec_start); the file is
 * unlinked as soon as it is open, so nothing is left behind whatever becomes of this process.
 * fork, not posix_spawn: the child must ask for its parent-death signal before it execs. */
pto_status pto__compiler_exec_start(const char *const *argv, pto_exec *out) {
  memset(out, 0, sizeof *out);
  out->log_fd = -1;
  const char *tmp = getenv("TMPDIR");
  char log[PATH_MAX];
  snprintf(log, sizeof log, "%s/pto-exec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int fd = mkostemp(log, O_CLOEXEC);
  if (fd < 0)
    return pto_status_make(PTO_STATUS_IO, "cannot create a temporary file: %s", strerror(errno));
  unlink(log);
  size_t off = 0;
  for (int i = 0; argv[i] && off < sizeof out->cmd - 1; i++)
    off += (size_t)snprintf(out->cmd + off, sizeof out->cmd - off, "%s%s", i ? " " : "", argv[i]);
  char prog[PATH_MAX];
  int perr = find_program(argv[0], prog, sizeof prog);
  if (perr) {
    close(fd);
    return pto_status_make(PTO_STATUS_IO, "cannot run %s: %s", argv[0], strerror(perr));
  }
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    int err = errno;
    close(fd);
    return pto_status_make(PTO_STATUS_IO, "cannot run %s: %s", argv[0], strerror(err));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) run_child(prog, argv, fd, errpipe[1], parent);
  int fork_err = errno;
  close(errpipe[1]);
  int exec_err = 0;
  ssize_t got = 0;
  if (pid > 0)
    while ((got = read(errpipe[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR) {
    }
  close(errpipe[0]);
  if (pid < 0 || got == (ssize_t)sizeof exec_err) {
    int err = pid < 0 ? fork_err : exec_err;
    if (pid > 0)
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
      }
    close(fd);
    return pto_status_make(PTO_STATUS_IO, "cannot run %s: %s", argv[0], strerror(err));
  }
  out->pid = pid;
  out->log_fd = fd;
  return PTO_OK;
}

pto_status pto__compiler_exec_wait(pto_exec *e) {
  int exit_status;
  return pto__compiler_exec_wait_status(e, &exit_status);
}

pto_status pto__compiler_exec_wait_status(pto_exec *e, int *out_exit_status) {
  int st = 0;
  while (waitpid(e->pid, &st, 0) < 0 && errno == EINTR) {
  }
  *out_exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  pto_status s = PTO_OK;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    char buf[4096] = {0};
    /* The end of the output holds the error that stopped the tool. */
    off_t n = lseek(e->log_fd, 0, SEEK_END);
    off_t from = n > (off_t)sizeof buf - 1 ? n - (off_t)sizeof buf + 1 : 0;
    ssize_t got = n > 0 ? pread(e->log_fd, buf, sizeof buf - 1, from) : 0;
    buf[got > 0 ? got : 0] = 0;
    size_t len = strlen(buf);
    while (len && buf[len - 1] == '\n')
      buf[--len] = 0;
    s = pto_status_make(PTO_STATUS_IO, "command failed (%s %d): %s\n%s",
                        WIFEXITED(st) ? "exit status" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), e->cmd, buf);
  }
  close(e->log_fd);
  e->log_fd = -1;
  return s;
}

pto_status pto__compiler_exec(const char *const *argv) {
  pto_exec e;
  PTO_RETURN_IF_ERROR(pto__compiler_exec_start(argv, &e));
  return pto__compiler_exec_wait(&e);
}

const char *pto__compiler_cc(void) {
  const char *e = getenv("PTO_CC");
  return e && *e ? e : PTO_C_COMPILER;
}

const char *pto__compiler_cxx(void) {
  const char *e = getenv("PTO_CXX");
  return e && *e ? e : PTO_CXX_COMPILER;
}

static char g_include_dir[PATH_MAX]; /* written once under g_include_once */
static pthread_once_t g_include_once = PTHREAD_ONCE_INIT;

/* Installed layout: <prefix>/lib/libpto_compiler.so next to <prefix>/include. */
static void find_include_dir(void) {
  Dl_info info;
  const char *self = dladdr((void *)&find_include_dir, &info) ? info.dli_fname : NULL;
  pto_file_include_dir(self, g_include_dir, sizeof g_include_dir);
}

const char *pto__compiler_include_dir(void) {
  pthread_once(&g_include_once, find_include_dir);
  return g_include_dir;
}

static char g_pch_dir[PATH_MAX]; /* "" when there is none to use; written once under g_pch_once */
static pthread_once_t g_pch_once = PTHREAD_ONCE_INIT;

static int newer(const struct timespec *a, const struct timespec *b) {
  return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

/* The precompiled orchestration header beside this library (pch/, compiler/CMakeLists.txt),
 * when it is at least as new as every header of the include dir in use. Not with
 * PTO_INCLUDE_DIR (headers it was not built from) or PTO_NO_PCH=1. */
static void find_pch_dir(void) {
  g_pch_dir[0] = 0;
  const char *e = getenv("PTO_INCLUDE_DIR");
  if (e && *e) return;
  e = getenv("PTO_NO_PCH");
  if (e && strcmp(e, "1") == 0) return;
  Dl_info info;
  if (!dladdr((void *)&find_pch_dir, &info) || !info.dli_fname || !strchr(info.dli_fname, '/'))
    return;
  char lib[PATH_MAX], dir[PATH_MAX + 8], path[PATH_MAX * 2];
  snprintf(lib, sizeof lib, "%s", info.dli_fname);
  snprintf(dir, sizeof dir, "%s/pch", dirname(lib));
  snprintf(path, sizeof path, "%s/pto/pto_orchestration_api.h.gch", dir);
  struct stat gs, hs;
  if (stat(path, &gs) != 0 || !S_ISREG(gs.st_mode)) return;
  char hdrs[PATH_MAX + 8];
  snprintf(hdrs, sizeof hdrs, "%s/pto", pto__compiler_include_dir());
  DIR *d = opendir(hdrs);
  if (!d) return;
  int fresh = 1;
  for (struct dirent *de; fresh && (de = readdir(d));) {
    size_t n = strlen(de->d_name);
    if (n < 3 || strcmp(de->d_name + n - 2, ".h") != 0) continue;
    snprintf(path, sizeof path, "%s/%s", hdrs, de->d_name);
    if (stat(path, &hs) != 0 || newer(&hs.st_mtim, &gs.st_mtim)) fresh = 0;
  }
  closedir(d);
  if (fresh && strlen(dir) < sizeof g_pch_dir) snprintf(g_pch_dir, sizeof g_pch_dir, "%s", dir);
}

const char *pto__compiler_pch_dir(void) {
  pthread_once(&g_pch_once, find_pch_dir);
  return g_pch_dir;
}

pto_status pto__compiler_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return pto_status_make(PTO_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
  size_t n = strlen(text);
  int ok = fwrite(text, 1, n, f) == n;
  if (fclose(f) != 0) ok = 0;
  if (!ok) return pto_status_make(PTO_STATUS_IO, "cannot write %s: %s", path, strerror(errno));
  return PTO_OK;
}

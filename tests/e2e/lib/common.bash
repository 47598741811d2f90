# Shared by the end-to-end tests: each test is a bash script run by CTest with $PTO (the built
# pto), $PTO_SOURCE_DIR, $PTO_CACHE_DIR and $PTO_TEST_TMP set.
set -uo pipefail
: "${PTO:?}" "${PTO_SOURCE_DIR:?}"
EX="$PTO_SOURCE_DIR/examples"
# In ASan builds: GCC 12's LeakSanitizer can crash at exit ("Tracer caught signal 11") when a
# dlopen'ed object's dynamic TLS block happens to sit at offset 16 of a page, which its
# __tls_get_addr interceptor mistakes for a glibc 2.19 header (google/sanitizers#1322).
# pto dlopens orchestration objects with thread_local state, so any program can hit it.
export ASAN_OPTIONS="intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# The sanitizers this pto was built with (CMake's PTO_SANITIZE, passed by CTest), as compiler flags
# for applications built against it: a sanitizer runtime must be the first library a process
# loads, so an application linked to sanitized pto libraries must itself be built with them.
# (Never sniff this with `ldd ... | grep -q` under pipefail: grep -q exits at the first match,
# ldd then dies of SIGPIPE, and the pipeline fails at random.)
case "${PTO_SANITIZE:-}" in OFF | FALSE | NO | 0 | "") PTO_SANFLAGS= ;; *) PTO_SANFLAGS="-fsanitize=$PTO_SANITIZE" ;; esac
mkdir -p "${PTO_TEST_TMP:-/tmp}"
T=$(mktemp -d "${PTO_TEST_TMP:-/tmp}/e2e-XXXXXX")
trap 'rm -rf "$T"' EXIT
FAILS=0
PASSES=0

# as_unprivileged_user: for tests of permissions, which root ignores: sets as_user to the command
# prefix that runs a command as a user that is not root (empty when this is not root; as root,
# setpriv as nobody, or SKIP without setpriv) and D to a folder $T/user that user owns.
as_unprivileged_user() {
  as_user=()
  if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null || {
      echo "SKIP: root without setpriv"
      exit 77
    }
    as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  fi
  D="$T/user"
  mkdir -p "$D"
  [ "${#as_user[@]}" = 0 ] || chown nobody:nogroup "$D"
  chmod 755 "$T"
}

# run_status EXPECTED_STATUS CMD...: runs CMD, keeps its output in $OUT, checks the exit status.
run_status() {
  local want=$1
  shift
  OUT=$("$@" 2>&1)
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $* exited $got, expected $want"
    echo "$OUT" | sed 's/^/  | /'
    FAILS=$((FAILS + 1))
    return 1
  fi
  PASSES=$((PASSES + 1))
  return 0
}

# run_pto EXPECTED_STATUS ARGS...: run_status of pto.
run_pto() {
  local want=$1
  shift
  run_status "$want" "$PTO" "$@"
}

# expect_out TEXT: the last run's output contains TEXT.
expect_out() {
  if ! grep -qF -- "$1" <<<"$OUT"; then
    echo "FAIL: output lacks '$1':"
    echo "$OUT" | sed 's/^/  | /'
    FAILS=$((FAILS + 1))
    return 1
  fi
  PASSES=$((PASSES + 1))
}

expect_true() {
  local what=$1
  shift
  if ! "$@"; then
    echo "FAIL: $what"
    FAILS=$((FAILS + 1))
    return 1
  fi
  PASSES=$((PASSES + 1))
}

finish() {
  echo "$PASSES passed, $FAILS failed"
  [ "$FAILS" = 0 ]
}

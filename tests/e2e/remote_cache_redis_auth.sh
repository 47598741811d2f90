#!/usr/bin/env bash
# A password-protected Redis as the remote cache (docs/remote-cache.md): a redis-server started
# here on loopback with `requirepass` and an ACL user. redis://:PASSWORD@HOST and
# redis://USER:PASSWORD@HOST (percent-escapes decoded) authenticate and round-trip an entry (a
# compile stores it, a compile from another local cache is a remote hit); a wrong password and a
# missing one are one clear warning each, the compile proceeding locally; the password of
# PTO_REMOTE_CACHE_PASSWORD_FILE serves a URL without one. No password is printed, ever.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/remote_servers.bash"
need_servers
trap 'stop_servers; rm -rf "$T"' EXIT
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY PTO_REMOTE_CACHE_KEY_FILE PTO_REMOTE_CACHE_PASSWORD_FILE

PW='hunter2-default'
CIPW='s@fe/pa%ss:w0rd' # an ACL user's password, written %-escaped in a URL
CIPW_URL='s%40fe%2Fpa%25ss%3Aw0rd'
WRONG='not-the-hunter2'
dir="$T/redis"
mkdir -p "$dir"
port=$(free_port)
cat >"$dir/redis.conf" <<CONF
bind 127.0.0.1
port $port
dir $dir
save ""
appendonly no
daemonize no
logfile $dir/log
requirepass $PW
user ci on >$CIPW ~* +@all
CONF
timeout 600 redis-server "$dir/redis.conf" &
SERVER_PIDS+=($!)
wait_until redis redis-cli -p "$port" --no-auth-warning -a "$PW" ping || exit 1
HOSTPORT="127.0.0.1:$port/2"

# no_secret: the last output prints no password, neither as given nor as escaped in a URL.
no_secret() {
  local s
  for s in "$PW" "$CIPW" "$CIPW_URL" "$WRONG"; do
    if grep -qF -- "$s" <<<"$OUT"; then
      echo "FAIL: the output prints a password ($s):"
      echo "$OUT" | sed 's/^/  | /'
      FAILS=$((FAILS + 1))
      return 1
    fi
  done
  PASSES=$((PASSES + 1))
}
# compile_from CACHE URL: a compile of add.ptir with its own local cache dir; always exit 0 (a
# remote that fails never fails a compile that can build here).
compile_from() {
  PTO_CACHE_DIR="$T/$1" run_status 0 timeout 120 "$PTO" compile "$EX/add.ptir" -o "$T/w-$1" \
    --remote-cache "$2"
  no_secret
}
stats() {
  OUT=$(PTO_CACHE_DIR="$T/$1" "$PTO" cache stats --json)
}

# ---- the default user's password: stored, then a remote hit from another cache ---------------
compile_from store "redis://:$PW@$HOSTPORT"
expect_true "no warning with the right password" test "$(grep -c 'remote cache' <<<"$OUT")" = 0
stats store
expect_out '"remote_misses": 1, "remote_stores": 1, "remote_errors": 0'
compile_from hit "redis://:$PW@$HOSTPORT"
stats hit
expect_out '"remote_hits": 1'
expect_out '"remote_errors": 0'
expect_true "the entry is in database 2" \
  test "$(redis-cli -p "$port" --no-auth-warning -a "$PW" -n 2 dbsize)" = 1

# ---- a wrong password: one warning naming the URL masked, the compile proceeds ---------------
compile_from wrong "redis://:$WRONG@$HOSTPORT"
expect_out "remote cache redis://:***@$HOSTPORT"
expect_out "authentication failed: WRONGPASS"
expect_out "(refused: the password of the URL)"
expect_out "not using it for the rest of this process"
expect_true "one warning for a wrong password" test "$(grep -c 'remote cache' <<<"$OUT")" = 1
stats wrong
expect_out '"remote_hits": 0'
expect_out '"remote_errors": 1'

# ---- no password: the server says NOAUTH, and pto says how to give one -----------------------
compile_from none "redis://$HOSTPORT"
expect_out "NOAUTH"
expect_out "the server requires a password (NOAUTH Authentication required.): give it as redis://:PASSWORD@HOST[:PORT][/DB]"
expect_out "PTO_REMOTE_CACHE_PASSWORD_FILE"
stats none
expect_out '"remote_errors": 1'
# ... and without a database (no SELECT before the first command).
compile_from none0 "redis://127.0.0.1:$port"
expect_out "the server requires a password"

# ---- an ACL user: USER:PASSWORD, its escapes decoded -----------------------------------------
compile_from acl "redis://ci:$CIPW_URL@$HOSTPORT"
stats acl
expect_out '"remote_hits": 1'
expect_out '"remote_errors": 0'
compile_from acl-wrong "redis://ci:$WRONG@$HOSTPORT"
expect_out "remote cache redis://ci:***@$HOSTPORT"
expect_out "authentication failed: WRONGPASS"
expect_out "(refused: the user and password of the URL)"
# The ACL user's password is not the default user's.
compile_from acl-default "redis://:$CIPW_URL@$HOSTPORT"
expect_out "authentication failed: WRONGPASS"

# ---- PTO_REMOTE_CACHE_PASSWORD_FILE: the first line, for a URL without a password -------------
printf '%s\n' "$PW" >"$T/pw"
chmod 600 "$T/pw"
printf '%s\n' "$CIPW" >"$T/cipw"
chmod 600 "$T/cipw"
PTO_REMOTE_CACHE_PASSWORD_FILE=$T/pw compile_from file "redis://$HOSTPORT"
expect_true "no warning with the password file" test "$(grep -c 'remote cache' <<<"$OUT")" = 0
stats file
expect_out '"remote_hits": 1'
PTO_REMOTE_CACHE_PASSWORD_FILE=$T/cipw compile_from file-acl "redis://ci@$HOSTPORT"
stats file-acl
expect_out '"remote_hits": 1'
PTO_REMOTE_CACHE_PASSWORD_FILE=$T/cipw compile_from file-wrong "redis://$HOSTPORT"
expect_out "authentication failed: WRONGPASS"
expect_out "(refused: the password of PTO_REMOTE_CACHE_PASSWORD_FILE $T/cipw)"
# A user without any password is a configuration error, not a request.
compile_from user-only "redis://ci@$HOSTPORT"
expect_out "a user without a password"
# A password file every user can read is warned about, and used.
chmod 644 "$T/pw"
PTO_REMOTE_CACHE_PASSWORD_FILE=$T/pw compile_from file-open "redis://$HOSTPORT"
expect_out "PTO_REMOTE_CACHE_PASSWORD_FILE $T/pw can be read or written by every user (mode 0644)"
stats file-open
expect_out '"remote_hits": 1'

# ---- listing with a password ------------------------------------------------------------------
PTO_REMOTE_CACHE="redis://ci:$CIPW_URL@$HOSTPORT" run_pto 0 cache ls --remote
expect_true "ls --remote lists the entry" test "$(grep -c 'KiB' <<<"$OUT")" = 1
no_secret
PTO_REMOTE_CACHE="redis://:$WRONG@$HOSTPORT" run_status 1 "$PTO" cache ls --remote
expect_out "authentication failed"
no_secret
finish

#!/usr/bin/env bash
# Hostile bytes that pto's messages quote never reach the terminal raw: an escape sequence in a
# .npy header, in a [STRACE] span name (raw or %1b, which pto never writes: the record is skipped
# as malformed) or a [STASK] kernel name (the line is refused as malformed), and in an answer of
# a hostile remote cache (a fake HTTP server on 127.0.0.1, bounded lifetime, that answers every
# GET with an entry header for the key asked and an escape sequence as its file record). Each
# message still says what is wrong, with the control bytes as \xNN.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY PTO_REMOTE_CACHE_KEY_FILE
ESC=$'\033'
no_esc() { # no_esc WHAT: the last output holds no ESC byte
  expect_true "no raw escape byte in: $1" test "$(grep -c "$ESC" <<<"$OUT")" = 0
}
run_pto 0 compile "$EX/add.ptir" -o "$T/w" --force

printf '\x93NUMPY\x01\x00\x10\x00\033]0;PWNED\007xxxxxxx' >"$T/esc.npy"
run_pto 2 run "$T/w" --in a="$T/esc.npy" &&
  expect_out 'esc.npy: .npy header is not a dict: \x1b]0;PWNED\x07'
no_esc ".npy header"

printf '[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a\033]0;PWNED\007 ts=1 dur=1\n' >"$T/a.log"
printf '[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=b%%1b[31m ts=1 dur=1\n' >>"$T/a.log"
printf '[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=node.run ts=1 dur=1000\n' >>"$T/a.log"
run_pto 0 trace "$T/a.log" --tree && expect_out "2 truncated or malformed skipped" &&
  expect_out node.run
no_esc "span names"

printf '[STRACE] v=1 pid=1 tid=1 inv=1 hid=1 depth=0 name=a ts=1 dur=10\n' >"$T/t.log"
printf '[STASK] v=1 pid=1 tid=1 inv=1 hid=1 task=0 kernel=k\033[31m core=0 ready=0 ts=1 dur=5 deps=-\n' >>"$T/t.log"
run_pto 2 trace "$T/t.log" --timeline &&
  expect_out 'malformed [STASK] line: [STASK] v=1 pid=1 tid=1 inv=1 hid=1 task=0 kernel=k\x1b[31m'
no_esc "a [STASK] kernel name"

if [ -x /usr/bin/python3 ]; then
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  timeout 120 /usr/bin/python3 - "$port" <<'PY' 2>"$T/server.log" &
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        key = os.path.basename(self.path)
        body = ("pto-remote-entry/1 %s %s\n\x1b]0;PWNED\x07 record\n" % (key, "0" * 32)).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def do_HEAD(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def do_PUT(self):
        n = int(self.headers.get("Content-Length", 0)); self.rfile.read(n)
        self.send_response(201); self.send_header("Content-Length", "0"); self.end_headers()
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
  server=$!
  for _ in $(seq 100); do
    /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $port)).close()" 2>/dev/null && break
    sleep 0.1
  done
  PTO_CACHE_DIR="$T/cache2" run_pto 0 compile "$EX/add.ptir" -o "$T/w2" \
    --remote-cache "http://127.0.0.1:$port/pto" &&
    expect_out 'refusing the remote cache entry' && expect_out "malformed file record '\\x1b]0;PWNED\\x07 record'"
  no_esc "a remote's answer"
  PTO_CACHE_DIR="$T/cache2" run_pto 0 run "$T/w2" --dim M=70 --check && expect_out PASS
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
fi
finish

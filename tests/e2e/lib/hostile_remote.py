"""An HTTP remote cache that misbehaves on purpose, for tests/e2e/remote_cache_hostile.sh.

Usage: hostile_remote.py PORT STORE_DIR. URL http://127.0.0.1:PORT/MODE/KEY: PUT and HEAD keep
objects in STORE_DIR (any MODE); GET answers by MODE:
  ok        the stored object, or 404
  500       HTTP status 500
  redirect  302 to /ok/KEY on this server (a client that follows it gets a valid entry)
  slowbody  200 with Content-Length 1000000, 19 bytes, then nothing for 60 s
  shortlen  200 announcing 1000 bytes more than the stored object, half of it, then closes
  huge      200 with Content-Length 3 GiB, then nothing for 60 s
  replay    another stored object than KEY's (a valid entry, for another program)
"""
import http.server
import os
import socketserver
import sys
import time

STORE = sys.argv[2]
os.makedirs(STORE, exist_ok=True)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, self.path))

    def parts(self):
        p = self.path.strip("/").split("/")
        return p[0], os.path.basename(p[-1])

    def answer(self, code, data=b"", length=None, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_PUT(self):
        _, key = self.parts()
        data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(os.path.join(STORE, key), "wb") as f:
            f.write(data)
        self.answer(201)

    def do_HEAD(self):
        _, key = self.parts()
        self.answer(200 if os.path.exists(os.path.join(STORE, key)) else 404)

    def do_GET(self):
        mode, key = self.parts()
        path = os.path.join(STORE, key)
        stored = open(path, "rb").read() if os.path.exists(path) else None
        if mode == "500":
            self.answer(500)
        elif mode == "redirect":
            self.answer(302, headers=[("Location", "/ok/" + key)])
        elif mode == "slowbody":
            self.answer(200, b"pto-remote-entry/1 ", length=1000000)
            time.sleep(60)
        elif mode == "shortlen":
            data = stored or b"x" * 100
            self.answer(200, data[: len(data) // 2], length=len(data) + 1000)
            self.close_connection = True
        elif mode == "huge":
            self.answer(200, length=3 << 30)
            time.sleep(60)
        elif mode == "replay" and [k for k in os.listdir(STORE) if k != key]:
            other = sorted(k for k in os.listdir(STORE) if k != key)[0]
            with open(os.path.join(STORE, other), "rb") as f:
                self.answer(200, f.read())
        elif stored is not None:
            self.answer(200, stored)
        else:
            self.answer(404)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()

"""A Redis remote cache that misbehaves on purpose, for tests/e2e/remote_cache_hostile.sh.

Usage: hostile_redis.py PORT MODE. It answers +OK to every command but GET (and :0 to EXISTS);
a GET is answered by MODE:
  huge     a bulk string announced as 3 GiB, then up to 2900 MiB of it as fast as it goes
  trickle  a bulk string announced as 1000 bytes, then one byte a second for 60 s
  array    an array announced with 10^9 elements, then 64 KiB of them a second for 60 s
  scan     (GET answers nil) SCAN lists a valid name, and one that is pto: then 32 bytes
           of terminal escape sequences
  scanloop SCAN never ends: cursor 1, and 65536 names that are not pto's, every time
"""
import socket
import sys
import threading
import time

MODE = sys.argv[2]
SCANLOOP = b"*2\r\n$1\r\n1\r\n*65536\r\n" + (b"$36\r\npto:" + b"z" * 32 + b"\r\n") * 65536


def serve(conn):
    f = conn.makefile("rb")
    try:
        while True:
            line = f.readline()
            if not line.startswith(b"*"):
                return
            args = []
            for _ in range(int(line[1:])):
                f.readline()
                args.append(f.readline().strip())
            cmd = args[0].upper()
            if cmd == b"SCAN" and MODE == "scan":
                names = [b"pto:" + b"0123456789abcdef" * 2,
                         b"pto:" + (b"\x1b]0;pwned\x07\x1b[2J" * 3)[:32]]
                conn.sendall(b"*2\r\n$1\r\n0\r\n*%d\r\n" % len(names) +
                             b"".join(b"$%d\r\n%s\r\n" % (len(n), n) for n in names))
                continue
            if cmd == b"SCAN" and MODE == "scanloop":
                conn.sendall(SCANLOOP)
                continue
            if cmd == b"GET" and MODE == "scan":
                conn.sendall(b"$-1\r\n")
                continue
            if cmd == b"GET" and MODE == "array":
                conn.sendall(b"*1000000000\r\n")
                items = b":1\r\n" * (1 << 14)
                for _ in range(60):
                    conn.sendall(items)
                    time.sleep(1)
                return
            if cmd == b"GET" and MODE == "huge":
                conn.sendall(b"$3000000000\r\n")
                zeros = b"\0" * (1 << 20)
                for _ in range(2900):
                    conn.sendall(zeros)
                return
            if cmd == b"GET":
                conn.sendall(b"$1000\r\n")
                for _ in range(60):
                    conn.sendall(b"x")
                    time.sleep(1)
                return
            conn.sendall(b":0\r\n" if cmd == b"EXISTS" else b"+OK\r\n")
    except OSError:
        pass
    finally:
        conn.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()

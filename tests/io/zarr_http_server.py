#!/usr/bin/env python3
"""A loopback HTTP server for the Zarr-over-HTTP tests: serves one folder with Range support, and
misbehaves where the first path component asks it to.

    /ok/PATH        the file; Range "bytes=a-b", "a-" and "-n" answered 206 with Content-Range
    /flaky/PATH     500 to the first request for each path, then as /ok
    /down/PATH      503 always
    /forbidden/PATH 403 always
    /stall/PATH     reads the request and answers nothing
    /short/PATH     announces 1000 bytes more than it sends, then closes the connection
    /huge/PATH      announces a terabyte, then sends zeros
    /endless/PATH   200 without a length, zeros until the client hangs up
    /norange/PATH   the whole file, whatever the Range
    /overrange/PATH 206 with 100 bytes more than the range asked for
    /nohead/PATH    405 to HEAD, GET as /ok
    /token/PATH     as /ok when the query holds token=secret, else 403
    /folded/PATH    200 whose first header line is folded (starts with a space), then closes
    /connections    the number of TCP connections accepted so far, less those that asked this
                    (each on a connection of its own)

PATH is percent-decoded; the query is ignored but by /token.

A mode ending in "-chunks" (e.g. /stall-chunks/PATH) misbehaves only for chunks and shards; the
metadata files are served as by /ok, so that the image opens and its reads fail.

Usage: zarr_http_server.py FOLDER. Listens on 127.0.0.1 only, on a port the system picks, which
it prints as the first line of its output; stops when its standard input closes (the test that
started it ended, however it ended) or on SIGTERM.
"""

import http.server
import os
import re
import sys
import threading
import time
import urllib.parse

FOLDER = os.path.realpath(sys.argv[1])
SEEN = set()  # /flaky paths already answered with 500
SEEN_LOCK = threading.Lock()
CONNECTIONS = 0  # accepted so far
CONNECTIONS_LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers
    # Headers and body go out in two writes; with Nagle's algorithm the second waits for the
    # client's delayed acknowledgement of the first on every request.
    disable_nagle_algorithm = True

    def log_message(self, *args):  # quiet: the test's output is what matters
        pass

    def do_HEAD(self):
        if self.path.startswith("/nohead/"):
            return self.plain(405, b"HEAD not allowed")
        return self.answer(body=False)

    def do_GET(self):
        self.answer(body=True)

    def file_of(self, rest):
        path = os.path.realpath(os.path.join(FOLDER, rest.lstrip("/")))
        if not (path == FOLDER or path.startswith(FOLDER + os.sep)) or not os.path.isfile(path):
            return None
        return path

    def plain(self, status, text=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)

    def zeros_forever(self, body):
        if not body:
            return
        block = bytes(1 << 16)
        try:
            while True:
                self.wfile.write(block)
        except OSError:  # the client gave up
            pass

    def answer(self, body):
        url = urllib.parse.urlsplit(self.path)
        mode, _, rest = urllib.parse.unquote(url.path).lstrip("/").partition("/")
        if mode == "connections":
            global CONNECTIONS
            with CONNECTIONS_LOCK:
                CONNECTIONS -= 1  # the connection asking is not counted
                return self.plain(200, str(CONNECTIONS).encode())
        if mode == "token":
            if urllib.parse.parse_qs(url.query).get("token") != ["secret"]:
                return self.plain(403, b"no token")
            mode = "ok"
        if mode.endswith("-chunks"):
            metadata = os.path.basename(rest) in ("zarr.json", ".zarray", ".zattrs", ".zgroup")
            mode = "ok" if metadata else mode[:-len("-chunks")]
        if mode == "down":
            return self.plain(503, b"down for a test")
        if mode == "forbidden":
            return self.plain(403, b"no")
        if mode == "folded":
            self.close_connection = True
            self.wfile.write(b"HTTP/1.1 200 OK\r\n folded: yes\r\nContent-Length: 0\r\n\r\n")
            return None
        if mode == "stall":
            self.close_connection = True
            time.sleep(60)
            return None
        if mode == "flaky":
            with SEEN_LOCK:
                first = self.path not in SEEN
                SEEN.add(self.path)
            if first:
                return self.plain(500, b"try again")
        path = self.file_of(rest)  # "ok", "nohead" and the modes below serve the file
        if path is None:
            return self.plain(404, b"not found")
        with open(path, "rb") as f:
            data = f.read()
        if mode == "huge":
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 40))
            self.end_headers()
            return self.zeros_forever(body)
        if mode == "endless":
            self.close_connection = True
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            return self.zeros_forever(body)
        status, extra = 200, {}
        wanted = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if wanted and mode != "norange":
            first, last = wanted.groups()
            if first == "":
                start, end = max(0, len(data) - int(last)), len(data)
            else:
                start = int(first)
                end = len(data) if last == "" else min(len(data), int(last) + 1)
            if start >= len(data):
                return self.plain(416)
            extra["Content-Range"] = "bytes %d-%d/%d" % (start, end - 1, len(data))
            data = data[start:end]
            status = 206
            if mode == "overrange":
                data += bytes(100)
        self.send_response(status)
        for k, v in extra.items():
            self.send_header(k, v)
        announced = len(data) + (1000 if mode == "short" else 0)
        self.send_header("Content-Length", str(announced))
        if mode == "short":
            self.close_connection = True
        self.end_headers()
        if body:
            self.wfile.write(data)


class CountingServer(http.server.ThreadingHTTPServer):
    # More than a reader's threads connecting at once: with the default of 5, a handshake the
    # full backlog dropped showed up as one more connection, carrying no request.
    request_queue_size = 64
    def get_request(self):
        accepted = super().get_request()
        global CONNECTIONS
        with CONNECTIONS_LOCK:
            CONNECTIONS += 1
        return accepted


def main():
    server = CountingServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the test closes its end, or dies
    os._exit(0)  # without waiting for stalled answers


if __name__ == "__main__":
    main()

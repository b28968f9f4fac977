"""A local HTTP server for the playground's browser test: serves docs/ (the page needs http for
its worker and wasm) on 127.0.0.1, and this folder's drive.html and drive.js under /test/ (the
page that drives the playground through a scenario), writes the JSON the page POSTs to /report/NAME into
OUT/NAME.json, and answers GET /wait/NAME only once that file exists (at most WAIT seconds), which
holds the page's load event, and so a headless browser's screenshot, until the run has ended.
Usage: serve.py DOCS_DIR OUT_DIR PORT_FILE (the chosen port is written there)."""
import functools
import http.server
import os
import sys
import time

WAIT = 900


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript"}

    def translate_path(self, path):
        if path.startswith("/test/"):
            name = path.split("?", 1)[0][len("/test/"):]
            if name in ("drive.html", "drive.js"):
                return os.path.join(HERE, name)
        return super().translate_path(path)

    def do_GET(self):
        if not self.path.startswith("/wait/"):
            return super().do_GET()
        name = self.path.rsplit("/", 1)[-1]
        end = time.monotonic() + WAIT
        while not os.path.exists(os.path.join(OUT, name + ".json")) and time.monotonic() < end:
            time.sleep(0.2)
        self.send_response(204)
        self.end_headers()

    def do_POST(self):
        name = self.path.rsplit("/", 1)[-1]
        if not self.path.startswith("/report/") or not name.replace("-", "").isalnum():
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        tmp = os.path.join(OUT, name + ".json.tmp")
        with open(tmp, "wb") as f:
            f.write(body)
        os.replace(tmp, os.path.join(OUT, name + ".json"))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


HERE = os.path.dirname(os.path.abspath(__file__))
DOCS, OUT, PORT_FILE = sys.argv[1:4]
server = http.server.ThreadingHTTPServer(
    ("127.0.0.1", 0), functools.partial(Handler, directory=DOCS))
with open(PORT_FILE, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()

"""A small HTTP server on 127.0.0.1 for trying the network examples and templates offline.

    python3 -m nika.templates.loopback [--port 8765]     # PORT=… in the environment works too

It serves fixed pages and prints every request body it is sent, so a run that fetches and
notifies can be followed without the internet:

* ``GET /tides``: an article page (a title, metadata, navigation and an advert around the text),
  for ``nika:fetch`` modes ``metadata``, ``article``, ``markdown``, ``links``;
* ``GET /releases/latest``: release notes as JSON (``{name, body, published_at}``);
* ``GET /rates``: exchange rates as JSON;
* ``GET /down/…``: always ``503 Service Unavailable`` (a transient failure: ``retry:`` and
  ``on_error:`` have something to do);
* ``POST`` anywhere (a webhook): answers ``204`` and prints ``webhook got: BODY`` (the first 160
  characters).

Loopback is below nika's SSRF floor, so a run that reaches it needs
``NIKA_FETCH_ALLOW_PRIVATE=127.0.0.1`` and ``127.0.0.1`` in ``permits.net.http``. Ctrl-C stops it.
Only the standard library; it listens on 127.0.0.1 and nowhere else.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TIDES = """<!doctype html>
<html lang="en"><head>
<meta charset="utf-8">
<title>Tide pools of Brittany | Shore Notes</title>
<meta name="description" content="What lives in the rock pools of the Breton coast at low tide.">
<meta property="og:title" content="Tide pools of Brittany">
<meta property="og:type" content="article">
<meta name="author" content="Maël Le Goff">
<link rel="canonical" href="/tides">
</head><body>
<nav><a href="/">Shore Notes</a> · <a href="/archive">Archive</a> · <a href="/about">About</a></nav>
<aside class="ad">BUY SHELLS ONLINE — 50% OFF TODAY ONLY</aside>
<main><article>
<h1>Tide pools of Brittany</h1>
<p>At low tide the granite shelves of the Breton coast hold hundreds of pools, each a small sea
with its own anemones, crabs and blennies. The water left behind warms in the sun and grows
salty, and only the hardiest animals stay through the afternoon.</p>
<p>Beadlet anemones close into red jelly drops when the water leaves; shore crabs hide under the
wrack; a shanny, the common blenny, can live for years in the same pool and find its way back to
it after a high tide.</p>
<p>Turn a stone and put it back the way it was: the underside is somebody's home. Watch the tide
tables, and leave before the water turns.</p>
</article></main>
<footer>© Shore Notes · <a href="/privacy">Privacy</a></footer>
</body></html>
"""

RELEASE = {
    "name": "v2.0.0",
    "body": "Drops Python 3.10. Starts twice as fast. The `--legacy` flag is gone.",
    "published_at": "2026-11-30T09:00:00Z",
}
RATES = {"base": "EUR", "as_of": "2026-12-01", "rates": {"USD": 1.05, "GBP": 0.83, "JPY": 159.1}}


class _Handler(BaseHTTPRequestHandler):
    server_version = "nika-loopback"

    def log_message(self, format: str, *args: object) -> None:
        pass  # the requests that matter are printed by the handlers below

    def _send(self, status: int, body: bytes = b"", ctype: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/tides":
            self._send(200, TIDES.encode(), "text/html; charset=utf-8")
        elif path == "/releases/latest":
            self._send(200, json.dumps(RELEASE).encode(), "application/json")
        elif path == "/rates":
            self._send(200, json.dumps(RATES).encode(), "application/json")
        elif path.startswith("/down"):
            self._send(503, b"down for maintenance\n")
        elif path == "/":
            self._send(200, b"/tides  /releases/latest  /rates  /down/...  POST anywhere: a webhook\n")
        else:
            self._send(404, b"not here\n")

    def do_POST(self) -> None:
        size = min(int(self.headers.get("content-length") or 0), 1 << 20)
        body = self.rfile.read(size).decode("utf-8", "replace")
        shown = body if len(body) <= 160 else f"{body[:160]}… ({len(body)} characters)"
        print(f"webhook got: {shown}", flush=True)  # before the answer: printed by the time the sender goes on
        self._send(204)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m nika.templates.loopback", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8765), help="default 8765")
    args = parser.parse_args(argv)
    try:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), _Handler)
    except OSError as exc:
        print(f"loopback: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    server.daemon_threads = True
    print(f"serving http://127.0.0.1:{server.server_address[1]} (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

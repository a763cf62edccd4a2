"""Real proof servers on loopback: a DNS server (dnslib) and an HTTP server for the well-known file."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from dnslib import QTYPE, RR, TXT
from dnslib.server import BaseResolver, DNSLogger, DNSServer


class TxtResolver(BaseResolver):
    def __init__(self):
        self.records: dict[str, list[str]] = {}
        self.queries: list[str] = []

    def resolve(self, request, handler):
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        self.queries.append(name)
        if request.q.qtype == QTYPE.TXT:
            for value in self.records.get(name, []):
                reply.add_answer(RR(request.q.qname, QTYPE.TXT, rdata=TXT(value), ttl=60))
        return reply


class LoopbackDns:
    def __init__(self):
        self.resolver = TxtResolver()
        self.server = DNSServer(self.resolver, port=0, address="127.0.0.1", logger=DNSLogger(logf=lambda _s: None))
        self.port = self.server.server.server_address[1]
        self.server.start_thread()

    def publish(self, name: str, value: str):
        self.resolver.records.setdefault(name.lower(), []).append(value)

    def stop(self):
        self.server.stop()


class WellKnownFiles:
    """Serves /.well-known/svc-atlas.txt per Host header from `files`."""

    def __init__(self):
        self.files: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []
        files, seen = self.files, self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                host = self.headers.get("Host", "").split(":")[0]
                seen.append((host, self.path))
                body = files.get(host)
                if self.path != "/.well-known/svc-atlas.txt" or body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

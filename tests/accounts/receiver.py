"""A webhook receiver on loopback that records each POST and answers from a script of statuses."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, statuses=(200,), hold_first_seconds: float = 0.0):
        self.received: list[dict] = []
        self.statuses = list(statuses)
        self.arrived = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.received.append({"headers": dict(self.headers), "body": body, "path": self.path})
                receiver.arrived.set()
                index = len(receiver.received) - 1
                if index == 0 and hold_first_seconds:
                    time.sleep(hold_first_seconds)
                status = receiver.statuses[min(index, len(receiver.statuses) - 1)]
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait_for(self, count: int, timeout: float = 30.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(self.received) >= count:
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

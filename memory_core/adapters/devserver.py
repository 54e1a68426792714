"""The web server `memoria up` runs: werkzeug's, on a fixed number of threads.

werkzeug's threaded server starts a thread per request without limit, so a burst of clients could
ask the connection pool for more connections than it has and wait; here requests queue for one of
`threads` threads instead, and the app's pool has one connection per thread (app.create_app)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from werkzeug.serving import ThreadedWSGIServer


class PooledWSGIServer(ThreadedWSGIServer):
    def __init__(self, host: str, port: int, app, *, threads: int):
        super().__init__(host, port, app)
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="web")

    def process_request(self, request, client_address):
        self.executor.submit(self.process_request_thread, request, client_address)

    def server_close(self):
        super().server_close()
        self.executor.shutdown(wait=False, cancel_futures=True)

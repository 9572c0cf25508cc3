"""A loopback HTTP server for release tarballs made by the tests."""

import contextlib
import functools
import http.server
import os
import tarfile
import threading


class _Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, requests, **kwargs):
        self._requests = requests
        super().__init__(*args, **kwargs)

    def do_GET(self):
        self._requests.append(('GET', self.path))
        super().do_GET()

    def do_HEAD(self):
        self._requests.append(('HEAD', self.path))
        super().do_HEAD()

    def log_message(self, *args):
        pass


class LoopbackServer:
    """http.server on 127.0.0.1 (a free port) serving *root*, counting requests."""

    def __init__(self, root):
        self.root = root
        self.requests = []
        handler = functools.partial(_Handler, directory=root, requests=self.requests)
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name):
        return f'http://127.0.0.1:{self.httpd.server_port}/{name}'

    def gets(self, name):
        return self.requests.count(('GET', f'/{name}'))

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def serving(directory):
    """A LoopbackServer of *directory* (made if missing), stopped on leaving."""
    os.makedirs(directory, exist_ok=True)
    server = LoopbackServer(str(directory))
    try:
        yield server
    finally:
        server.stop()


def tarball_of(tree, path, arcname):
    """*path*: a gzipped tarball of *tree*, unpacking to *arcname*."""
    with tarfile.open(path, 'w:gz') as tar:
        tar.add(tree, arcname=arcname)
    return path

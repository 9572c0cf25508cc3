"""The bad-input matrix, round 4 (issue 39), class 69: runs that hang.

A site's time-series store behind ReFrame's ``httpjson`` perflog handler
that never answers, or answers 429 Too Many Requests forever: ReFrame posts
each record with no timeout and, by default, retries a 429 forever. The run
must end and say that the store missed the session; and a `clusterbench run`
killed while its ReFrame hangs must leave nothing of the session running or
holding the node lock.

Each case is a real `clusterbench run` of one tiny NPB run (the fake tree),
with a site config that adds the handler as docs/report.md shows, pointed at
a real HTTP server on 127.0.0.1.
"""

import contextlib
import http.server
import os
import re
import signal
import subprocess
import threading

import pytest
from badinput import Store, assert_line, npb, programs_under
from conftest import PROJECT
from test_bad_inputs_runner import QUIET, npb_env, session_reframe
from test_run_session import start, wait_for

from clusterbench.sessions import nodelock, reaper

pytestmark = pytest.mark.integration

#: A site config as docs/report.md shows it: `local`, with an httpjson
#: perflog handler added through the site config helper.
SITE = """\
import os, runpy
here = {configs!r}
local = runpy.run_path(os.path.join(here, 'local.py'))
common = runpy.run_path(os.path.join(here, 'common.py'))
site_configuration = dict(local['site_configuration'])
site_configuration['logging'] = common['logging'](
    perflog_handlers=[{{'type': 'httpjson', 'url': {url!r}, 'level': 'info'}}]
)
"""

#: The same handler added behind the helper's back: ReFrame's own, which
#: posts with no timeout (a ReFrame that hangs whatever the helper does).
RAW_SITE = """\
import os, runpy
local = runpy.run_path(os.path.join({configs!r}, 'local.py'))
site_configuration = local['site_configuration']
for logging in site_configuration['logging']:
    logging['handlers_perflog'].append(
        {{'type': 'httpjson', 'url': {url!r}, 'level': 'info'}}
    )
"""

#: How long a `clusterbench run` of one tiny test may take before the test
#: calls it hung: a guard, not a timing claim.
HANG_GUARD = 300


class Store429(http.server.ThreadingHTTPServer):
    """A time-series store on 127.0.0.1 that takes each post and then never
    answers (*mode* ``silent``), or answers 429 to every one (``429``)."""

    daemon_threads = True

    def __init__(self, mode):
        self.posts = 0
        self.released = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(handler):  # noqa: N805 - the server is self here
                length = int(handler.headers.get('Content-Length') or 0)
                handler.rfile.read(length)
                self.posts += 1
                if mode == 'silent':
                    self.released.wait()
                    return
                handler.send_response(429)
                handler.send_header('Content-Length', '0')
                handler.end_headers()

            def log_message(handler, *args):  # noqa: N805
                pass

        super().__init__(('127.0.0.1', 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server_address[1]}/rfm'

    def stop(self):
        self.released.set()
        self.shutdown()
        self.server_close()


@contextlib.contextmanager
def endpoint(mode):
    server = Store429(mode)
    try:
        yield server
    finally:
        server.stop()


def site_config(tmp_path, url, text=SITE):
    path = tmp_path / 'site.py'
    path.write_text(text.format(configs=os.path.join(PROJECT, 'site_configs'), url=url))
    return path


def descendants(pid):
    """The pids of every process below *pid*."""
    found = []
    for child, _ in reaper.children(pid):
        found += [child, *descendants(child)]
    return found


def end_all(pids):
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def run_under_guard(tmp_path, store, site, *reframe_args):
    """`clusterbench run --config SITE` of one tiny NPB run into *store*:
    (exit code, output); everything it started is killed if it hangs."""
    proc = start(
        tmp_path, '--config', str(site), '--checks', 'reframe_checks/npb.py',
        '--results', str(store.results), '--references', str(store.refs),
        '--confirm', '0', '--', *reframe_args,
        env=npb_env(tmp_path),
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        end_all([*descendants(proc.pid), proc.pid])
        out, err = proc.communicate()
        pytest.fail(f'clusterbench run hung (killed after {HANG_GUARD} s):\n{out}{err}')
    return proc.returncode, out + err


NOT_SENT = '{URL} ({WHY}): the time-series store missed this session'


@pytest.mark.parametrize(
    'mode, why',
    [
        ('silent', r'timed out after 10 s'),
        # ReFrame's own retries end first; on a starved machine the
        # helper's deadline may end them: the store missed it either way.
        ('429', r'HTTP 429 Too Many Requests after retrying for 5 s'
                r'|timed out after 10 s'),
    ],
    ids=['never-answers', '429-forever'],
)  # fmt: skip
def test_69_a_perflog_endpoint_that_never_answers_does_not_hang_run(
    tmp_path, mode, why
):
    store = Store(tmp_path)
    with endpoint(mode) as server:
        site = site_config(tmp_path, server.url)
        rc, out = run_under_guard(tmp_path, store, site, *npb(*QUIET))
        assert server.posts >= 1, out
    assert rc == 0, out
    pattern = re.escape(f'perflogs: not sent to {server.url} (') + f'(?:{why})'
    pattern += re.escape('): the time-series store missed this session')
    assert re.search(f'^{pattern}$', out, re.M), out
    assert 'Traceback' not in out
    # The figures are judged and stored all the same (the fake NPB's have no
    # reference).
    assert_line(out, '0 pass, 3 no reference, 0 FAILED')
    assert programs_under(tmp_path) == []
    store.assert_kept(new_session=True)


@pytest.mark.parametrize(
    'sig', [signal.SIGTERM, signal.SIGKILL], ids=['SIGTERM', 'kill-9']
)
def test_69_a_killed_run_whose_reframe_hangs_leaves_nothing_holding_the_lock(
    tmp_path, sig
):
    """ReFrame hangs in a post that ignores its SIGTERM: killing `clusterbench
    run` (SIGTERM or kill -9) still ends it, its keeper and its jobs, and frees
    the node lock: a second `run --no-wait` is accepted."""
    store = Store(tmp_path)
    pids = []
    with endpoint('silent') as server:
        site = site_config(tmp_path, server.url, RAW_SITE)
        with open(tmp_path / 'first.out', 'w') as log:
            first = start(
                tmp_path, '--config', str(site), '--checks', 'reframe_checks/npb.py',
                '--results', str(tmp_path / 'first'), '--references', str(store.refs),
                '--confirm', '0', '--', *npb(*QUIET), stdout=log,
                stderr=subprocess.STDOUT, env=npb_env(tmp_path),
            )  # fmt: skip
        try:
            keeper, reframe = session_reframe(first.pid)
            pids = [keeper, reframe]
            wait_for(lambda: server.posts, 'ReFrame to post its perflog record')
            os.kill(first.pid, sig)
            assert first.wait(timeout=HANG_GUARD) == -sig
            # However long ReFrame ignores the SIGTERM its keeper passes on,
            # the keeper ends it after a grace period, then itself.
            wait_for(
                lambda: not nodelock.running(keeper),
                'the keeper to end',
                timeout=HANG_GUARD,
            )
            assert not nodelock.running(reframe)
            assert programs_under(tmp_path) == []
        finally:
            end_all([*pids, *programs_under(tmp_path)])
            first.kill()
    # The node is free: a session that will not wait is accepted and runs.
    rc, out = store.run(*npb(*QUIET), options=('--no-wait', '--confirm', '0'))
    assert rc == 0, out
    assert 'is measuring for another session' not in out
    assert 'Traceback' not in out
    store.assert_kept(new_session=True)

"""The report of real runs, opened in a real headless browser (Debian's chromium).

Builds the report with the command (``python -m clusterbench.cli.report``, the same
code as ``clusterbench report``) from the session of test_report_runs.py and
from a copy of its results database holding a second, small session (so that
the trend section has figures measured twice), loads it in Chromium over the
DevTools protocol, and checks: no console error or exception, every plot
present and drawn (not blank), the trend plots among them, every section
there, no script and no remote resource. The
screenshot is kept under pytest's tmp dir and copied to
results/test-artifacts/report-e2e.png.
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import PROJECT
from rfm import captured, reframe
from test_report_runs import runs  # noqa: F401  (the session's real runs)

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
ARTIFACTS = os.path.join(PROJECT, 'results', 'test-artifacts')
SECTIONS = (
    'executive',
    'configurations',
    'summary',
    'applications',
    'communication',
    'scaling',
    'acceptance',
    'sensitivity',
    'trends',
    'failures',
    'provenance',
)

# Every plot image: loaded, has a size, and has drawn pixels (not blank).
_PLOTS_JS = """
(() => {
  const out = [];
  for (const img of document.querySelectorAll('img.plot-img')) {
    let inked = -1;
    if (img.complete && img.naturalWidth > 0) {
      const c = document.createElement('canvas');
      c.width = Math.min(img.naturalWidth, 800);
      c.height = Math.min(img.naturalHeight, 800);
      const g = c.getContext('2d');
      g.fillStyle = '#fff';
      g.fillRect(0, 0, c.width, c.height);
      g.drawImage(img, 0, 0, c.width, c.height);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      inked = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) inked++;
      }
    }
    out.push({alt: img.alt, id: img.closest('figure').id,
              w: img.naturalWidth, h: img.naturalHeight,
              shown: img.getBoundingClientRect().width, inked});
  }
  const remote = [...document.querySelectorAll('[src],[href]')]
    .map(e => e.getAttribute('src') || e.getAttribute('href'))
    .filter(u => /^(https?:)?\\/\\//.test(u));
  return JSON.stringify({
    plots: out,
    scripts: document.scripts.length,
    sections: [...document.querySelectorAll('section')].map(s => s.id),
    remote,
    height: document.documentElement.scrollHeight,
  });
})()
"""


class DevTools:
    """A minimal client of the Chrome DevTools protocol over a websocket."""

    def __init__(self, url, timeout=60):
        import websocket

        self.ws = websocket.create_connection(url, timeout=timeout)
        self.next_id = 0
        self.events = []

    def send(self, method, **params):
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({'id': ident, 'method': method, 'params': params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get('id') == ident:
                if 'error' in msg:
                    raise RuntimeError(f'{method}: {msg["error"]}')
                return msg.get('result', {})
            if 'method' in msg:
                self.events.append(msg)

    def wait_for(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e['method'] == method for e in self.events):
                return
            msg = json.loads(self.ws.recv())
            if 'method' in msg:
                self.events.append(msg)
        raise TimeoutError(f'no {method} within {timeout} s')

    def open(self, path, width, height):
        """Load the file at *path* in a *width* x *height* window, listening
        for console errors and exceptions."""
        self.send('Runtime.enable')
        self.send('Log.enable')
        self.send('Page.enable')
        self.resize(width, height)
        self.send('Page.navigate', url=path.as_uri())
        self.wait_for('Page.loadEventFired')

    def resize(self, width, height):
        self.send(
            'Emulation.setDeviceMetricsOverride',
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def evaluate(self, script):
        """The JSON text that *script* returns, parsed."""
        result = self.send(
            'Runtime.evaluate', expression=script, returnByValue=True, awaitPromise=True
        )
        return json.loads(result['result']['value'])

    def screenshot(self, tmp_path, name, whole_page=False):
        """A PNG of the window (or *whole_page*) under *tmp_path*, kept as
        an artefact in ARTIFACTS; its path under *tmp_path*."""
        extra = {'captureBeyondViewport': True} if whole_page else {}
        shot = self.send('Page.captureScreenshot', format='png', **extra)
        png = tmp_path / name
        png.write_bytes(base64.b64decode(shot['data']))
        os.makedirs(ARTIFACTS, exist_ok=True)
        kept = os.path.join(ARTIFACTS, name)
        shutil.copyfile(png, kept)
        print(f'\nscreenshot: {png}\nkept as: {kept}')
        return png

    def errors(self):
        found = []
        for e in self.events:
            p = e.get('params', {})
            if e['method'] == 'Runtime.exceptionThrown':
                found.append(p.get('exceptionDetails', {}).get('text', 'exception'))
            elif e['method'] == 'Runtime.consoleAPICalled' and p.get('type') in (
                'error',
                'assert',
            ):
                found.append(json.dumps(p.get('args')))
            elif e['method'] == 'Log.entryAdded':
                entry = p.get('entry', {})
                if entry.get('level') == 'error':
                    found.append(f'{entry.get("source")}: {entry.get("text")}')
        return found

    def close(self):
        self.ws.close()


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture
def browser(tmp_path):
    if CHROMIUM is None:
        pytest.skip('chromium not installed (apt-get install -y chromium)')
    try:
        import websocket  # noqa: F401
    except ImportError:
        pytest.skip('websocket-client not installed (pip install websocket-client)')
    port = _free_port()
    log = open(tmp_path / 'chromium.log', 'w')
    proc = subprocess.Popen(
        [
            CHROMIUM,
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--disable-dev-shm-usage',
            '--hide-scrollbars',
            f'--user-data-dir={tmp_path / "profile"}',
            '--remote-debugging-address=127.0.0.1',
            f'--remote-debugging-port={port}',
            'about:blank',
        ],
        stdout=log,
        stderr=log,
    )
    try:
        page = None
        deadline = time.monotonic() + 60
        while page is None and time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f'chromium exited with {proc.returncode}; see {log.name}')
            try:
                with urllib.request.urlopen(
                    f'http://127.0.0.1:{port}/json/list', timeout=5
                ) as resp:
                    targets = json.load(resp)
                page = next(t for t in targets if t.get('type') == 'page')
            except (OSError, StopIteration, ValueError):
                time.sleep(0.3)
        if page is None:
            pytest.fail(f'chromium did not open its DevTools port; see {log.name}')
        tools = DevTools(page['webSocketDebuggerUrl'])
        yield tools
        tools.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_report_of_real_runs_in_a_browser(runs, browser, tmp_path):  # noqa: F811
    prefix, report, _ = runs
    out = tmp_path / 'report' / 'report.html'
    # A second session in a copy of the database: one CG test measured again.
    db = tmp_path / 'results.db'
    shutil.copyfile(os.path.join(prefix, 'results.db'), db)
    rc, second_out, second = reframe(
        tmp_path / 'second',
        '-n',
        'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
        '-p',
        'gnu-openmpi',
        '-S',
        'CGSolverCheck.problem_class=S',
        env={'RFM_SQLITE_DB_FILE': str(db)},
    )
    assert second is not None, second_out
    proc = captured(
        [sys.executable, '-m', 'clusterbench.cli.report', report]
        + ['--history', 'now-1d:now', '-o', out]
        + ['--title', 'clusterbench e2e: local Open MPI vs MPICH'],
        env={'RFM_SQLITE_DB_FILE': db},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    csvs = sorted(os.listdir(out.parent / 'report-data'))

    browser.open(out, 1280, 900)
    page = browser.evaluate(_PLOTS_JS)

    # Screenshot of the whole page, kept as a test artifact.
    browser.resize(1280, min(int(page['height']), 30000))
    png = browser.screenshot(tmp_path, 'report-e2e.png', whole_page=True)

    assert browser.errors() == []
    assert page['scripts'] == 0 and page['remote'] == []
    assert page['sections'] == list(SECTIONS)
    plots = page['plots']
    # Every plot is there (one per CSV besides the summary's and the
    # executive table's) and drawn.
    assert len(plots) == len(csvs) - 2 >= 4
    for plot in plots:
        assert plot['w'] > 100 and plot['h'] > 100, plot
        assert plot['shown'] > 100, plot
        assert plot['inked'] > 500, plot
    # The trend section: each figure of the test measured twice, drawn.
    trends = [p for p in plots if p['id'].startswith('trend-')]
    assert len(trends) == 5, [p['alt'] for p in plots]
    assert all('CGSolverCheck' in p['alt'] for p in trends)
    assert png.stat().st_size > 50_000

"""Outputs for machines, read as CI systems and time-series stores read them.

One tiny real `clusterbench run` (our CG solver, class S, one test) judged
against a gflops reference no run reaches (SLOWER), with a site config that
adds ReFrame's own ``httpjson`` perflog handler pointed at a receiver on
loopback. Its JUnit file is read by junitparser (what Python CI tooling uses),
its JSON by json, and ReFrame's perflogs (file and HTTP) must carry the
verdict and the CPU identity with no clusterbench code in the handler.
"""

import http.server
import json
import threading
from datetime import UTC, datetime

import junitparser
import pytest
from conftest import PROJECT
from rfm import CG_CHECKS, TINY_CG, classic_cg_references, clusterbench

from clusterbench.core.reference import Reference
from clusterbench.judging import machineview, verdict
from clusterbench.judging.verdict import Kind, Verdict
from clusterbench.results.runreport import Failure, Figure, Origin

SITE = """\
import runpy
local = runpy.run_path({local!r})
site_configuration = local['site_configuration']
for logging in site_configuration['logging']:
    logging['handlers_perflog'].append(
        {{'type': 'httpjson', 'url': {url!r}, 'level': 'info'}}
    )
"""


class Receiver(http.server.ThreadingHTTPServer):
    """An HTTP server on loopback that keeps every JSON body posted to it."""

    def __init__(self):
        self.records = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(handler):  # noqa: N805 - the server is self here
                length = int(handler.headers.get('Content-Length') or 0)
                self.records.append(json.loads(handler.rfile.read(length)))
                handler.send_response(200)
                handler.end_headers()

            def log_message(handler, *args):  # noqa: N805
                pass

        super().__init__(('127.0.0.1', 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server_address[1]}/rfm'


@pytest.fixture(scope='module')
def session(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('outputs')
    classic_cg_references(tmp / 'refs', gflops=[1.0e6, -0.1, 0.1, 'GFlop/s'])
    receiver = Receiver()
    receiver.thread.start()
    site = tmp / 'site.py'
    local = f'{PROJECT}/site_configs/local.py'
    site.write_text(SITE.format(local=local, url=receiver.url))
    (tmp / 'locks').mkdir()
    env = {
        'RFM_SQLITE_DB_FILE': tmp / 'results.db',
        'CLUSTERBENCH_PERFLOGDIR': tmp / 'perflogs',
        'CLUSTERBENCH_LOCK_DIR': tmp / 'locks',
    }
    try:
        ran = clusterbench(
            'run', '--config', site, '--results', tmp / 'results',
            '--references', tmp / 'refs', '--junit', tmp / 'junit.xml',
            '--confirm', '0', '--checks', CG_CHECKS, '--', *TINY_CG,
            '-S', 'judge_conditions=false', '-S', 'probe_host=false',
            env=env,
        )  # fmt: skip
    finally:
        receiver.shutdown()
    (path,) = (tmp / 'results' / 'local').glob('*/report.json')
    report = json.loads(path.read_text())
    (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    return tmp, ran, path, report, case, receiver.records


@pytest.mark.integration
def test_the_run_fails_on_its_slower_figure(session):
    _, ran, _, _, case, _ = session
    assert ran.returncode == 1, ran.stdout[-3000:] + ran.stderr
    # The summary is last, where `tail` finds it, after the session's digest.
    *_, digest, _, summary, strict = ran.stdout.rstrip().splitlines()
    assert digest.startswith('Session details: run conditions of ')
    assert digest.endswith(' (-v shows them)')
    assert summary == '0 pass, 1 SLOWER, 4 no reference, 0 FAILED'
    assert strict == '4 no reference: would fail with --strict (exit 3)'
    assert case['perfvalues']['local:default:gflops'][-1] == 'fail'


@pytest.mark.integration
def test_junit_of_a_real_run_reads_in_junitparser(session):
    tmp, _, _, report, case, _ = session
    xml = junitparser.JUnitXml.fromfile(str(tmp / 'junit.xml'))
    # (Beside it, the session's time outside its test cases: its fixtures.)
    suite, outside = list(xml)
    assert outside.name == 'clusterbench' and outside.tests == 1
    assert suite.name == 'CGSolverCheck'
    info = report['session_info']
    start = datetime.fromtimestamp(int(info['time_start_unix']), UTC)
    assert suite.timestamp == start.strftime('%Y-%m-%dT%H:%M:%S')
    assert suite.hostname == info['hostname']
    assert suite.time == pytest.approx(case['time_total'], abs=1e-3)
    cases = {c.name: c for c in suite}
    assert set(cases) == {'gflops', 'bandwidth', 'time', 'iterations', 'mpi_share'}
    for each in cases.values():
        assert '.' not in each.classname and each.classname.startswith('CGSolver')
        # A fifth each: the five add up to the test case's time once.
        assert each.time == pytest.approx(case['time_total'] / 5, abs=1e-3)
    (failure,) = cases['gflops'].result
    assert isinstance(failure, junitparser.Failure) and failure.type == 'SLOWER'
    assert cases['time'].is_passed  # no reference: noted, not failed
    assert (suite.tests, suite.failures, suite.skipped) == (5, 1, 0)
    properties = {p.name: p.value for p in suite.properties()}
    assert properties['session'] == info['uuid']
    assert properties['cpu_kind'] == case['cpu_kind']


@pytest.mark.integration
def test_json_has_full_numbers_the_session_and_a_typed_verdict(session):
    _, _, path, report, case, _ = session
    shown = clusterbench('compare', '--format', 'json', path)
    assert shown.returncode == 1, shown.stderr
    rows = {row['variable']: row for row in json.loads(shown.stdout)}
    gflops = rows['gflops']
    assert gflops['value'] == case['perfvalues']['local:default:gflops'][0]
    assert isinstance(gflops['n'], int) and gflops['reference'] == 1.0e6
    assert gflops['verdict'] == {'kind': 'SLOWER', 'detail': ''}
    assert gflops['fails'] == 'run'
    assert gflops['session'] == report['session_info']['uuid']
    assert gflops['host'] == report['session_info']['hostname']
    start = datetime.strptime(report['session_info']['time_start'], '%Y%m%dT%H%M%S%z')
    assert gflops['timestamp'] == start.isoformat()
    assert gflops['cpu_kind'] == case['cpu_kind'] and gflops['nodes']
    assert rows['time']['verdict']['kind'] == 'no reference'
    assert rows['time']['fails'] == 'strict'


@pytest.mark.integration
def test_reframes_perflogs_carry_the_verdict_and_the_identity(session):
    tmp, _, _, _, case, records = session
    (log,) = (tmp / 'perflogs' / 'local' / 'default').glob('CGSolverCheck*.log')
    # ReFrame's header names a field without its check_ prefix.
    header, line = log.read_text().splitlines()
    fields = dict(zip(header.split('|'), line.split('|')))
    assert fields['result'] == 'fail'  # ReFrame's: the band, either side
    assert fields['verdict_kind'] == 'SLOWER'
    assert fields['verdict'] == 'SLOWER (gflops)'
    assert fields['cpu_kind'] == case['cpu_kind']
    assert fields['job_nodelist'] == ','.join(case['job_nodelist'])
    # ReFrame's own httpjson handler, to a real receiver: the same fields.
    (record,) = [
        r for r in records if r['check_display_name'].startswith('CGSolverCheck ')
    ]
    assert record['check_verdict_kind'] == 'SLOWER'
    assert record['check_verdict'] == 'SLOWER (gflops)'
    assert record['check_cpu_kind'] == case['cpu_kind']
    assert record['check_machine_identity']['cpu_kind'] == case['cpu_kind']
    value = case['perfvalues']['local:default:gflops'][0]
    assert record['check_perf_gflops_value'] == value


def _row(kind, detail=''):
    origin = Origin('u-1', '2026-11-26T15:02:01+01:00', 'vm', ('n1',), 'AMD-25-1')
    if kind in (Kind.FAILED, Kind.SKIPPED):
        phase = 'run' if kind == Kind.FAILED else 'skipped'
        fail = Failure('NPBCheck %npb.benchmark=cg', 'l', 'p', 'gcc-12.2', phase, 'x')
        return verdict.rows([], [fail])[0]
    fig = Figure(
        'NPBCheck %npb.benchmark=cg', 'l', 'p', 'gcc-12.2', 'mops', 1.0,
        'Mop/s', Reference(1.0, -0.1, 0.1, 'Mop/s'), None, origin=origin,
    )  # fmt: skip
    (judged,) = verdict.group([fig])
    judged.verdict = Verdict(kind, detail)
    return verdict.rows([judged], [])[0]


def _junit(table, strict):
    return junitparser.JUnitXml.fromstring(
        machineview.format_junit(table, strict).encode()
    )


def test_a_disturbed_figure_is_skipped_in_junit_and_fails_strict():
    table = [_row(Kind.DISTURBED, 'steal 18 %')]
    (suite,) = list(_junit(table, strict=False))
    (case,) = list(suite)
    assert case.is_skipped and 'DISTURBED (steal 18 %)' in case.result[0].message
    assert verdict.exit_code(table) == 0 and (suite.failures, suite.skipped) == (0, 1)
    (suite,) = list(_junit(table, strict=True))
    (failure,) = list(suite)[0].result
    assert failure.type == 'DISTURBED'
    assert verdict.exit_code(table, strict=True) == verdict.EXIT_STRICT


def test_junit_class_names_have_no_dot_and_the_time_is_utc():
    (suite,) = list(_junit([_row(Kind.PASS)], strict=False))
    (case,) = list(suite)
    assert case.classname == 'NPBCheck %npb_benchmark=cg [l:p] [gcc-12_2]'
    assert suite.timestamp == '2026-11-26T14:02:01' and suite.hostname == 'vm'

"""References recorded from real sessions judge the next unchanged run.

Three real ReFrame sessions of our CG solver (class S, one configuration,
two reruns each) recorded with `references update --write`, then a fourth
session judged against them: ReFrame resolves what was written, and every
figure's verdict follows from where it fell in the band written. Whether an
unchanged run stays inside its band is a claim about this machine's noise,
not about the code: evaluation/flag_detection.py measures it (its
false-flag rate); a 1.5 ms solve here fell outside a 3-session band in
about one session of ten. The rule itself (per-session medians, reach,
shares) is tested on synthetic samples in tests/references/test_refupdate.py.
"""

import csv
import glob
import io
import json
import re
import shutil
import statistics
import sys

import pytest
import rfm
import yaml

from clusterbench.core.disturbance import Disturbed
from clusterbench.judging import verdict
from clusterbench.noisyhost import hostprobe
from clusterbench.references import lookup as reflookup
from clusterbench.references import validate as refdata

pytestmark = [pytest.mark.integration, pytest.mark.alone]

#: The runs of this module (a name for the host-drift case to reuse), from
#: the one check file they need (a session loads no other).
CG_RUN = rfm.TINY_CG
CHECKS = 'reframe_checks/cgsolver.py'
SELECT = (
    *CG_RUN,
    '--repeat',
    '2',
    # Measured, not judged: beside other work the runs would be DISTURBED,
    # and disturbed figures never feed a reference.
    '-S',
    'judge_conditions=false',
)


def clusterbench(tmp, *args):
    """`clusterbench` with this test's references, database and perflogs."""
    return rfm.clusterbench(
        *args,
        env={
            'RFM_REFERENCE_PREFIX': str(tmp / 'refs'),
            'RFM_SQLITE_DB_FILE': str(tmp / 'results.db'),
            'CLUSTERBENCH_PERFLOGDIR': str(tmp / 'perflogs'),
        },
    )


def session(tmp, judged=False):
    """Run one real session; the path of its report (and its exit code when
    *judged*: a run against references may find a figure SLOWER)."""
    before = set(glob.glob(str(tmp / 'results' / 'local' / '*' / 'report.json')))
    where = ['--results', str(tmp / 'results'), '--checks', CHECKS]
    ran = clusterbench(tmp, 'run', *where, '--', *SELECT)
    after = set(glob.glob(str(tmp / 'results' / 'local' / '*' / 'report.json')))
    (report,) = after - before
    allowed = (0, 1, 3) if judged else (0, 3)
    assert ran.returncode in allowed, ran.stdout[-3000:] + ran.stderr
    return (report, ran.returncode) if judged else report


@pytest.fixture(scope='module')
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('sessions')
    (tmp / 'refs').mkdir()
    reports = [session(tmp) for _ in range(3)]
    update = clusterbench(
        tmp,
        'references',
        'update',
        '--directory',
        str(tmp / 'refs'),
        '--write',
        '--from',
        *reports,
    )
    assert update.returncode == 0, update.stdout + update.stderr
    return tmp, reports, update.stdout


def test_update_from_three_real_sessions(recorded):
    tmp, reports, out = recorded
    assert len({json.load(open(r))['session_info']['uuid'] for r in reports}) == 3
    assert out.count('(n=6 in 3 sessions,') == 5, out
    # No shortfall (the solver's 14 % floor is named: a `check` warning).
    assert 'warning: references update' not in out
    assert refdata.check_file(str(tmp / 'refs' / 'local' / 'cgsolver.yaml')) == {
        'CGSolverCheck': 5
    }
    prov = yaml.safe_load(
        (tmp / 'refs' / 'local' / 'provenance' / 'cgsolver.yaml').read_text()
    )
    ((entry,),) = prov['CGSolverCheck'].values()
    assert entry['figures']['gflops']['sessions'] == 3
    assert len(entry['figures']['gflops']['session_medians']) == 3


def test_the_next_run_is_judged_by_the_band_written(recorded):
    tmp, _, _ = recorded
    report, code = session(tmp, judged=True)
    # ReFrame itself resolved the references just written, as our look-up does.
    data = json.load(open(report))
    cases = [c for c in data['runs'][0]['testcases'] if not c['fixture']]
    assert len(cases) == 2  # --repeat 2
    written = reflookup.references_for(cases[0], str(tmp / 'refs'))
    assert len(written) == 5, written
    for case in cases:
        resolved = {k.rsplit(':', 1)[1]: v[1] for k, v in case['perfvalues'].items()}
        assert resolved == {k: v[0] for k, v in written.items()}
    compared = clusterbench(
        tmp, 'compare', '--references', str(tmp / 'refs'), '--format', 'csv', report
    )
    rows = list(csv.DictReader(io.StringIO(compared.stdout)))
    kinds = {row['variable']: verdict.kind(row['verdict']) for row in rows}
    assert set(kinds) == {'gflops', 'bandwidth', 'time', 'iterations', 'mpi_share'}
    # Every figure has a declared direction: never FLAGGED, never unreferenced.
    assert not {verdict.FLAGGED, verdict.NO_REFERENCE} & set(kinds.values())
    # The deterministic figure and the share near zero pass outright.
    assert kinds['iterations'] == kinds['mpi_share'] == verdict.PASS, compared.stdout
    for name in ('gflops', 'bandwidth', 'time'):
        ref, lower, upper, _ = written[name]
        low, high = verdict.bounds(ref, lower, upper)
        values = [
            v[0] for c in cases for k, v in c['perfvalues'].items()
            if k.endswith(f':{name}')
        ]  # fmt: skip
        # The time grows, the rates fall: the same side of the band.
        bad = [v > high if name == 'time' else v < low for v in values]
        good = [v < low if name == 'time' else v > high for v in values]
        if not any(bad) and not any(good):
            expected = {verdict.PASS, verdict.INCONCLUSIVE}
        elif all(bad):
            expected = {verdict.SLOWER, verdict.INCONCLUSIVE}
        elif all(good):
            expected = {verdict.FASTER, verdict.PASS}
        else:  # the two runs disagree: the median and its interval decide
            expected = {verdict.PASS, verdict.INCONCLUSIVE, verdict.SLOWER,
                        verdict.FASTER}  # fmt: skip
        assert kinds[name] in expected, (name, values, low, high, compared.stdout)
    # The run's exit code is the table's: 1 exactly when something is SLOWER.
    assert (code == verdict.EXIT_REGRESSION) == (verdict.SLOWER in kinds.values())


def test_provenance_keeps_the_host_probe_of_the_sessions(recorded):
    tmp, reports, _ = recorded
    per_session = []
    for path in reports:
        cases = json.load(open(path))['runs'][0]['testcases']
        probes = [c['run_conditions']['host_probe'] for c in cases if not c['fixture']]
        assert len(probes) == 2  # --repeat 2: a probe before each run
        # A one-rank memory-bound solver: its bandwidth on its one core too.
        measured = {*hostprobe.REQUIRED, 'mem_gbs', 'cores'}
        assert all(set(p) == measured for p in probes), probes
        per_session.append(probes)
    prov = yaml.safe_load(
        (tmp / 'refs' / 'local' / 'provenance' / 'cgsolver.yaml').read_text()
    )
    ((entry,),) = prov['CGSolverCheck'].values()
    assert entry['host_probe']['sessions'] == 3
    for name in (*hostprobe.REQUIRED, 'mem_gbs', 'cores'):
        medians = [statistics.median(p[name] for p in s) for s in per_session]
        # Kept to 4 significant digits, like the references.
        expected = statistics.median(medians)
        assert entry['host_probe'][name] == pytest.approx(expected, rel=1e-3), name


def test_a_host_slower_than_for_its_references_is_disturbed(recorded, tmp_path):
    tmp, _, _ = recorded
    # The references were made on a host three times faster: this one drifted.
    refs = tmp_path / 'refs'
    shutil.copytree(tmp / 'refs', refs)
    prov_path = refs / 'local' / 'provenance' / 'cgsolver.yaml'
    prov = yaml.safe_load(prov_path.read_text())
    ((entry,),) = prov['CGSolverCheck'].values()
    entry['host_probe'] = {
        k: v * 3 if k != 'sessions' else v for k, v in entry['host_probe'].items()
    }
    prov_path.write_text(yaml.safe_dump(prov))
    ran = rfm.clusterbench(
        'run', '--results', str(tmp_path / 'results'), '--references', str(refs),
        '--checks', CHECKS, '--', *CG_RUN,
        env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
             'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs')},
    )  # fmt: skip
    out = ran.stdout + ran.stderr
    (report,) = glob.glob(str(tmp_path / 'results' / 'local' / '*' / 'report.json'))
    cases = json.load(open(report))['runs'][0]['testcases']
    (case,) = [c for c in cases if not c['fixture']]
    cond = case['run_conditions']
    assert cond['host_probe_reference'] == entry['host_probe']
    # Both judged figures, each about -67 % (the run's own noise on top).
    drift = Disturbed(hostprobe.drift(cond['host_probe'], entry['host_probe'], 0.20))
    # A loaded machine may add its own reason (other processes' CPU share).
    assert case['disturbed'].endswith(drift), out
    assert re.fullmatch(r'host probe dgemm -[4-8]\d %, gather -[4-8]\d %', drift)
    assert f'DISTURBED ({case["disturbed"]})' in ' '.join(out.split()), out
    # Not judged, so not failed; a --strict run would exit 3.
    assert ran.returncode == 0, out


def test_session_holdout_judges_each_session_by_the_others(recorded):
    _, reports, _ = recorded
    ran = rfm.captured(
        [sys.executable, 'evaluation/session_holdout.py', '--min-sessions', '2',
         *reports]
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = ran.stdout
    assert re.search(r'rule floor 0\.03, k 3: [0-3] of 3 held-out sessions green', out)
    counted = re.findall(r'spread [<>=]+ 3%, (.+?): (\d+) figures', out)
    # Five figures in each of three sessions; a 10 % slowdown only of the
    # three with a direction that are not shares (gflops, bandwidth, time).
    totals = {}
    for when, n in counted:
        totals[when] = totals.get(when, 0) + int(n)
    assert totals == {'unchanged': 15, '10% worse': 9, '5% worse': 9}, out

"""History, replay and the update round trip, on sessions run for real."""

import os

import pytest
import verdicttable
import yaml
from rfm import clusterbench, reframe

from clusterbench.checks.plugins.energy import FIGURES as ENERGY
from clusterbench.parsers import hpcc

pytestmark = pytest.mark.integration

SMALL = (
    '-n',
    'HPCCCheck|CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
    '-S',
    'CGSolverCheck.problem_class=S',
    '-S',
    'HPCCCheck.hpl_n=960',
    '-S',
    'HPCCCheck.hpl_nb=96',
)


@pytest.fixture(scope='module')
def session(tmp_path_factory):
    prefix = tmp_path_factory.mktemp('session')
    rc, out, report = reframe(prefix, *SMALL)
    assert report is not None, out
    return prefix


def verdicts(stdout):
    return {
        (r['test'], r['environment'], r['variable']): r['verdict']
        for r in verdicttable.rows(stdout)
    }


def test_update_then_replay_passes_and_tolerance_change_flags(session, tmp_path):
    refs = tmp_path / 'refs'
    report = str(session / 'report.json')
    # One session: written only when forced (tests/references/test_rule_of_three.py).
    upd = clusterbench(
        'references', 'update', '--from', report, '--directory', str(refs), '--write',
        '--force',
    )  # fmt: skip
    assert upd.returncode == 0, upd.stderr
    replayed = clusterbench('replay', str(session), '--references', str(refs), '-v')
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert replayed.stdout.splitlines()[0] == f'references: {refs} (--references)'
    got = {k: v for k, v in verdicts(replayed.stdout).items() if k[2] not in ENERGY}
    assert len(got) == len(hpcc.FIGURES) + 1 + 2 * 5
    assert set(got.values()) == {'pass'}

    # Try a tighter band on the stored data: move one reference by 20 %.
    data = yaml.safe_load((refs / 'local' / 'hpcc.yaml').read_text())
    leaf = data['HPCCCheck']['local:default']['gnu-openmpi']
    while 'hpl' not in leaf:
        leaf = next(iter(leaf.values()))
    leaf['hpl'][0] *= 1.2
    (refs / 'local' / 'hpcc.yaml').write_text(yaml.safe_dump(data))
    replayed = clusterbench('replay', str(session), '--references', str(refs), '-v')
    assert replayed.returncode == 1
    got = verdicts(replayed.stdout)
    assert got[('HPCCCheck', 'gnu-openmpi', 'hpl')] == 'SLOWER'
    assert got[('HPCCCheck', 'gnu-openmpi', 'dgemm_star')] == 'pass'


def test_replay_reverifies_the_stored_output(session, tmp_path):
    copy = tmp_path / 'copy'
    os.system(f'cp -r {session} {copy}')
    report = (copy / 'report.json').read_text().replace(str(session), str(copy))
    (copy / 'report.json').write_text(report)
    out = next(copy.glob('output/local/default/gnu-openmpi/HPCCCheck/hpccoutf.txt'))
    out.write_text(out.read_text().replace('\nSuccess=1\n', '\nSuccess=0\n'))
    replayed = clusterbench('replay', str(copy))
    assert replayed.returncode == 1
    assert 'FAILED (sanity):' in replayed.stdout and 'Success=0.0' in replayed.stdout


def test_compare_against_stored_history(session):
    env_db = {'RFM_SQLITE_DB_FILE': str(session / 'results.db')}
    import subprocess

    from rfm import tool

    result = subprocess.run(
        [
            tool('clusterbench'),
            'compare',
            str(session / 'report.json'),
            '--history',
            'now-1d:now',
            '-v',
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **env_db},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    got = verdicts(result.stdout)
    assert len(got) == 34 and set(got.values()) == {'pass'}
    empty = subprocess.run(
        [
            tool('clusterbench'),
            'compare',
            str(session / 'report.json'),
            '--history',
            'now-1d:now',
        ],
        capture_output=True,
        text=True,
        env={**os.environ, 'RFM_SQLITE_DB_FILE': str(session / 'none.db')},
    )
    assert empty.returncode == 2
    assert 'no session' in empty.stderr or 'results database' in empty.stderr


def _edits(data, path=(), kind=(), depth=0, seen=None):
    """Every kind of place of *data* (lists: their first two items), as key
    paths. The items of a list of records (the runs, the test cases) share
    their fields: a field is edited in the first item that has it, the
    fields only a later item has (another check's) there; so do the figures
    of a test case's perfvalues. A list of values keeps its positions (a
    perfvalue's value, reference and bounds)."""
    seen = set() if seen is None else seen
    if depth > 5:
        return
    items = data.items() if isinstance(data, dict) else enumerate(data[:2])
    for key, value in items:
        record = isinstance(key, int) and isinstance(value, dict)
        where = (*kind, '[]' if record or kind[-1:] == ('perfvalues',) else key)
        if where not in seen:
            seen.add(where)
            yield (*path, key)
        if isinstance(value, (dict, list)):
            yield from _edits(value, (*path, key), where, depth + 1, seen)


def test_no_edit_of_a_real_report_is_a_traceback(session, tmp_path):
    # Every field of a real report replaced by a value of another type, or
    # removed: each command either works or says what is wrong in one line.
    import copy
    import json

    from clusterbench import cli
    from clusterbench.core import errors
    from clusterbench.report import assemble

    original = json.loads((session / 'report.json').read_text())
    edited = session / 'edited.json'  # in the session: replay reads beside it
    commands = {
        'compare': lambda args: cli.main(['compare', args]),
        'replay': lambda args: cli.main(['replay', args]),
        'references update': lambda args: cli.main(
            ['references', 'update', '--directory', str(tmp_path / 'refs'),
             '--from', args]
        ),
        # What `report` reads (rendering, the slow part, is not repeated).
        'report': lambda args: errors.run_command(
            'report', lambda p: assemble.assemble(assemble.load_reports([p])), args
        ),
    }  # fmt: skip
    tracebacks = []
    for where in _edits(original):
        for value in ('x', None, 'remove'):
            data = copy.deepcopy(original)
            parent = data
            for key in where[:-1]:
                parent = parent[key]
            if value == 'remove':
                del parent[where[-1]]
            else:
                parent[where[-1]] = value
            edited.write_text(json.dumps(data))
            for name, command in commands.items():
                try:
                    command(str(edited))
                except Exception as exc:  # noqa: BLE001 - what the test looks for
                    tracebacks.append((name, where, value, repr(exc)))
    edited.unlink()
    assert not tracebacks, tracebacks[:5]
    assert not (tmp_path / 'refs').exists()

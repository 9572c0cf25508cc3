"""The bad-input matrix, round 4 (issue 39), class 57: control characters
from reports and reference files never reach the terminal raw.

An `ESC[8m` in a test name would hide what follows it, an `ESC]0;...BEL`
retitle the terminal, a `\\r` overwrite a line. The real `clusterbench`
shows each as its escape (`\\x1b[8m`), as JUnit already did: in the verdict
table, the A/B table, the `references update` proposal, the `references:`
line and an error line naming a YAML path.
"""

import json
import shutil
import subprocess

from badinput import Store, hashes
from conftest import PROJECT
from rfm import tool
from test_bad_inputs_verdict import session
from test_reftransaction import REFERENCES, run_report

ESC = '\x1b'
HIDDEN = 'HPCCCheck %tag=\x1b[8mhidden'
TITLE = 'HPCCCheck %tag=\x1b]0;pwned\x07'


def cb(*args):
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip


def assert_escaped(result):
    shown = result.stdout + result.stderr
    assert ESC not in shown and '\x07' not in shown and '\r' not in shown, shown
    assert 'Traceback' not in shown


def hostile_session(store):
    """A SLOWER HPCC test named with ESC[8m, and a failed one named with a
    terminal-title sequence whose reason clears the screen."""
    path = session(store, factor=0.5)
    data = json.loads(path.read_text())
    (case,) = data['runs'][0]['testcases']
    names = ('name', 'display_name', 'unique_name')
    failed = {
        **case,
        **dict.fromkeys(names, TITLE),
        'result': 'fail',
        'fail_phase': 'sanity',
        'fail_reason': 'rfm_job.out: \x1b[2Jgone\rover',
        'perfvalues': {},
    }
    data['runs'][0]['testcases'] = [{**case, **dict.fromkeys(names, HIDDEN)}, failed]
    path.write_text(json.dumps(data))
    store.before = hashes(store.refs, store.results)
    return path


def test_57_the_verdict_table_escapes_control_characters(tmp_path):
    store = Store(tmp_path)
    path = hostile_session(store)
    result = cb('compare', path, '--references', store.refs)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr == ''
    assert_escaped(result)
    lines = result.stdout.splitlines()
    row = next(line for line in lines if line.startswith('HPCCCheck tag=\\x1b[8m'))
    assert row.split()[:3] == ['HPCCCheck', 'tag=\\x1b[8mhidden', 'hpl']
    assert row.endswith('SLOWER')
    assert (
        '  HPCCCheck tag=\\x1b]0;pwned\\x07 on local:default with gnu-openmpi: '
        'FAILED (sanity): rfm_job.out: \\x1b[2Jgone over'  # a reason is one line
    ) in lines
    store.assert_kept()


def test_57_the_junit_escaping_is_the_same_one(tmp_path):
    # One escaping for both: JUnit keeps what XML can hold (none of these).
    store = Store(tmp_path)
    path = hostile_session(store)
    result = cb('compare', path, '--references', store.refs, '--format', 'junit')
    assert result.returncode == 1, result.stderr
    assert_escaped(result)
    assert 'classname="HPCCCheck %tag=\\x1b[8mhidden [local:default]' in result.stdout
    store.assert_kept()


def test_57_the_references_update_proposal_escapes_control_characters(tmp_path):
    store = Store(tmp_path)
    reports = []
    for n in range(3):
        path = tmp_path / f'r{n}.json'
        run_report(path, files=('cgsolver',), factor=1 + n / 100, uuid=f's-{n}')
        data = json.loads(path.read_text())
        for case in data['runs'][0]['testcases']:
            case['variant'] = '\x1b[8mclassic'
        path.write_text(json.dumps(data))
        reports.append(path)
    result = cb('references', 'update', '--references', store.refs, '--from', *reports)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_escaped(result)
    (line,) = [x for x in result.stdout.splitlines() if '/ gflops:' in x]
    assert 'variant=\\x1b[8mclassic ranks_per_node=1 / gflops: ' in line
    store.assert_kept()


def test_57_an_error_line_naming_a_yaml_path_escapes_it(tmp_path):
    # A reference directory whose name holds ESC[8m, with a key that does.
    refs = tmp_path / 'refs\x1b[8m'
    shutil.copytree(REFERENCES, refs)
    (refs / 'local' / 'hpcc.yaml').write_text(
        'HPCCCheck:\n  local:default:\n    gnu-openmpi:\n'
        '      "\\e[8mhpl": [fast, -0.1, 0.1, GFlop/s]\n'
    )
    before = hashes(refs)
    shown = str(refs).replace(ESC, '\\x1b')
    for args in (('references', 'check'), ('compare', session(Store(tmp_path)))):
        result = cb(*args, '--references', refs)
        assert result.returncode == 2, result.stdout + result.stderr
        assert_escaped(result)
        assert result.stderr.splitlines() == [
            f'clusterbench: error: {shown}/local/hpcc.yaml:4: HPCCCheck > '
            'local:default > gnu-openmpi: expected [reference, lower, upper, '
            "unit], got {'\\x1b[8mhpl': ['fast', -0.1, 0.1, 'GFlop/s']}"
        ]
    assert hashes(refs) == before


def test_57_the_references_line_escapes_its_directory(tmp_path):
    refs = tmp_path / 'refs\x1b[8m'
    shutil.copytree(REFERENCES, refs)
    store = Store(tmp_path, refs=refs)
    result = cb('compare', session(store, factor=0.5), '--references', refs)
    assert result.returncode == 1, result.stderr
    assert_escaped(result)
    shown = str(refs).replace(ESC, '\\x1b')
    assert result.stdout.splitlines()[0] == f'references: {shown} (--references)'
    store.assert_kept()


def test_57_the_ab_table_escapes_control_characters(tmp_path):
    # A stored A/B session (two blocks, ABBA then BAAB) whose legs name the
    # solver with ESC[8m: judged again, the table shows the escape.
    prefix = tmp_path / 'ab'
    legs = []
    for block, order in enumerate(('ABBA', 'BAAB')):
        for arm in order:
            number = len(legs) + 1
            report = prefix / f'{number:02d}-{arm}' / 'report.json'
            report.parent.mkdir(parents=True)
            factor = (1.0 if arm == 'A' else 2.0) + number / 1000
            run_report(report, files=('cgsolver',), factor=factor, uuid=f's-{number}')
            data = json.loads(report.read_text())
            for case in data['runs'][0]['testcases']:
                for key in ('name', 'display_name', 'unique_name'):
                    case[key] += '\x1b[8mhidden'  # its only name: shown
            report.write_text(json.dumps(data))
            legs.append(
                {'arm': arm, 'block': block, 'report': str(report.relative_to(prefix)),
                 'status': 0}
            )  # fmt: skip
    arms = {arm: {'system': 'local', 'args': ['-S', f'x={arm}']} for arm in 'AB'}
    plan = {'config': 'site_configs/local.py', 'checks': 'reframe_checks',
            'repeats': 2, 'max_blocks': 4, 'resolve': None, 'extra': [],
            'arms': arms, 'legs': legs}  # fmt: skip
    (prefix / 'ab.json').write_text(json.dumps(plan))
    before = hashes(prefix)
    result = cb('ab', '--judge', prefix)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert_escaped(result)
    rows = [x for x in result.stdout.splitlines() if x.startswith('CGSolverCheck')]
    assert rows and all(row.startswith('CGSolverCheck\\x1b[8mhidden ') for row in rows)
    assert hashes(prefix) == before


def test_57_references_check_escapes_a_test_name_and_a_stale_entry(tmp_path):
    refs = tmp_path / 'refs\x1b[8m'
    shutil.copytree(REFERENCES, refs)
    store = Store(tmp_path, refs=refs)
    path = store.file('hpcc')
    shown = path.replace(ESC, '\\x1b')
    with open(path) as f:
        line = len(f.readlines()) + 1
    with open(path, 'a') as f:
        f.write('NoSuchCheck:\n  local:default:\n    time: [1.0, -0.1, 0.1, s]\n')
    store.before = hashes(store.refs, store.results)
    result = cb('references', 'check', '--references', refs)
    assert result.returncode == 1, result.stdout + result.stderr
    assert_escaped(result)
    stale = f'stale: {shown}:{line}: NoSuchCheck: no such check in reframe_checks/'
    assert stale in result.stdout.splitlines()
    # A test name that is no class name is refused, in one escaped line.
    with open(path, 'a') as f:
        f.write('"NoSuch\\e[8mCheck":\n  local:default:\n')
        f.write('    time: [1.0, -0.1, 0.1, s]\n')
    store.before = hashes(store.refs, store.results)
    result = cb('references', 'check', '--references', refs)
    assert result.returncode == 2, result.stdout + result.stderr
    assert_escaped(result)
    assert result.stderr.splitlines() == [
        f'clusterbench: error: {shown}:{line + 4}: NoSuch\\x1b[8mCheck: test name '
        'must be a class name'
    ]
    store.assert_kept()

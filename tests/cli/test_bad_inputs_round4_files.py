"""The bad-input matrix, round 4 (issue 39): files that are not what a
command reads or writes.

- a FIFO, a device, a directory or a huge file given as a run report (class
  64): a FIFO blocked the reader forever, `/dev/zero` ate the memory;
- a report with a test case given twice (class 65): one ReFrame session
  cannot write it, and its copies outvoted the real sample;
- an output path too long, or under a regular file (class 66): a traceback.

Each case drives the real `clusterbench` on a copy of reference_data/ and a
results root (tests/badinput.py's Store) and asserts the one line, the exit
code and that no stored file changed. Every subprocess has a hang guard of
minutes: a command that blocks fails its test, it does not hang the suite.
"""

import copy
import json
import os
import subprocess

import pytest
from badinput import Store, hashes
from conftest import FIXTURES, PROJECT
from rfm import TINY_CG, tool
from test_reftransaction import run_report

#: What the commands read at most, in MiB (core.inputfile's default).
LIMIT_MIB = 256
HANG_GUARD = 300


def cb(*args, env=None):
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        capture_output=True, text=True, cwd=PROJECT, timeout=HANG_GUARD,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def one_error(result, line):
    """Exit 2 and *line* as the only line on stderr, no traceback."""
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr
    assert result.stderr.splitlines() == [line], result.stderr
    assert 'Traceback' not in result.stdout + result.stderr


# --- 64. a FIFO, a device, a directory or a huge file as a report -------------


def _fifo(path):
    os.mkfifo(path)
    return 'a FIFO'


def _dev_zero(path):
    os.symlink('/dev/zero', path)
    return 'a character device'


def _directory(path):
    os.mkdir(path)
    return 'a directory'


def _too_big(path):
    # Sparse: one byte over the limit costs no disk.
    with open(path, 'wb') as f:
        f.truncate(LIMIT_MIB * 2**20 + 1)
    return None


NOT_REGULAR = {
    'fifo': _fifo,
    'dev-zero-symlink': _dev_zero,
    'directory': _directory,
    'too-big': _too_big,
}


def ab_session(tmp_path, first_leg):
    """An A/B session of two blocks whose first leg's report is made by
    *first_leg* (the others are good reports); (session, first report)."""
    prefix = tmp_path / 'ab'
    legs = []
    for number, (arm, block) in enumerate(
        [('A', 0), ('B', 0), ('B', 1), ('A', 1)], start=1
    ):
        report = f'{number:02d}-{arm}/report.json'
        (prefix / report).parent.mkdir(parents=True)
        legs.append({'arm': arm, 'block': block, 'report': report, 'status': 0})
    for leg in legs[1:]:
        run_report(prefix / leg['report'], files=('hpcc',))
    plan = {
        'config': 'site_configs/local.py',
        'checks': 'reframe_checks',
        'repeats': 2,
        'max_blocks': 2,
        'resolve': None,
        'extra': [],
        'arms': {
            'A': {'system': 'local', 'args': ['-p', 'gnu-openmpi']},
            'B': {'system': 'local', 'args': ['-p', 'gnu-mpich']},
        },
        'legs': legs,
    }
    (prefix / 'ab.json').write_text(json.dumps(plan))
    bad = prefix / legs[0]['report']
    return prefix, bad, first_leg(bad)


#: command -> (arguments given the store, the bad path and an output file).
READERS = {
    'compare': lambda store, bad, out: ('compare', bad),
    'replay': lambda store, bad, out: ('replay', '--references', store.refs, bad),
    'report': lambda store, bad, out: (
        'report', '-o', out, '--references', store.refs, bad,
    ),
    'update': lambda store, bad, out: (
        'references', 'update', '--references', store.refs, '--write', '--from', bad,
    ),
    'trend': lambda store, bad, out: ('trend', 'hpl', bad, '-o', out),
    'baseline': lambda store, bad, out: (
        'baseline', '--references', store.refs, '--sessions', '0', '--from', bad,
    ),
}  # fmt: skip


def expected(path, kind):
    if kind is None:
        return (
            f'clusterbench: error: {path}: larger than {LIMIT_MIB} MiB '
            f'(set CLUSTERBENCH_MAX_INPUT_MIB to read more)'
        )
    return f'clusterbench: error: {path}: not a regular file ({kind})'


@pytest.mark.parametrize('bad', sorted(NOT_REGULAR))
@pytest.mark.parametrize('command', sorted(READERS))
def test_64_a_report_that_is_not_a_regular_file(tmp_path, command, bad):
    store = Store(tmp_path)
    # A session directory whose report.json is the bad file: the commands
    # that take a session directory read that (a directory given as a
    # report is one of them for the others).
    session = tmp_path / 'session'
    session.mkdir()
    path = session / 'report.json'
    kind = NOT_REGULAR[bad](path)
    given = session if command in ('report', 'replay', 'trend', 'baseline') else path
    out = tmp_path / 'out' / 'r.html'
    result = cb(*READERS[command](store, given, out))
    one_error(result, expected(path, kind))
    assert not (tmp_path / 'out').exists()
    store.assert_kept()


def test_64_dev_zero_itself_as_a_report(tmp_path):
    store = Store(tmp_path)
    result = cb('compare', '--references', store.refs, '/dev/zero')
    one_error(result, expected('/dev/zero', 'a character device'))
    store.assert_kept()


@pytest.mark.parametrize('bad', sorted(NOT_REGULAR))
def test_64_an_ab_leg_that_is_not_a_regular_file(tmp_path, bad):
    store = Store(tmp_path)
    prefix, path, kind = ab_session(tmp_path, NOT_REGULAR[bad])
    # The plan and the good legs (hashing the bad one would read it).
    kept = [prefix / 'ab.json', *prefix.glob('0[234]-*/report.json')]
    before = {p: p.read_bytes() for p in kept}
    result = cb('ab', '--judge', prefix)
    one_error(result, expected(path, kind))
    assert {p: p.read_bytes() for p in kept} == before
    store.assert_kept()


@pytest.mark.parametrize('bad', ['fifo', 'dev-zero-symlink'])
def test_64_an_ab_plan_that_is_not_a_regular_file(tmp_path, bad):
    """`ab --judge DIR` whose ab.json is a FIFO or /dev/zero: one line, not
    a reader blocked for ever or filling the memory."""
    store = Store(tmp_path)
    prefix, _, _ = ab_session(tmp_path, lambda path: run_report(path, files=('hpcc',)))
    plan = prefix / 'ab.json'
    plan.unlink()
    kind = NOT_REGULAR[bad](plan)
    result = cb('ab', '--judge', prefix)
    one_error(result, expected(plan, kind))
    store.assert_kept()


def test_64_the_limit_is_set_by_the_environment(tmp_path):
    store = Store(tmp_path)
    path = tmp_path / 'report.json'
    run_report(path, files=('hpcc',))
    # A real report, padded with white space to just over 1 MiB.
    with open(path, 'a') as f:
        f.write(' ' * (2**20 + 1 - path.stat().st_size))
    result = cb(
        'compare', '--references', store.refs, path,
        env={'CLUSTERBENCH_MAX_INPUT_MIB': '1'},
    )  # fmt: skip
    one_error(
        result,
        f'clusterbench: error: {path}: larger than 1 MiB '
        f'(set CLUSTERBENCH_MAX_INPUT_MIB to read more)',
    )
    result = cb(
        'compare', '--references', store.refs, path,
        env={'CLUSTERBENCH_MAX_INPUT_MIB': '2'},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    for wrong in ('0', '-1', '1.5', 'nan', 'lots'):
        result = cb('compare', path, env={'CLUSTERBENCH_MAX_INPUT_MIB': wrong})
        one_error(
            result,
            f'clusterbench: error: CLUSTERBENCH_MAX_INPUT_MIB={wrong}: '
            f'not a whole number of MiB above 0',
        )
    store.assert_kept()


# --- 65. a test case given twice in one report --------------------------------


def duplicated(path, times=3):
    """A report of one HPCC test case whose first copy is slow (10 GF/s,
    below its band) and whose *times* - 1 copies pass."""
    run_report(path, files=('hpcc',))
    data = json.loads(path.read_text())
    good = data['runs'][0]['testcases'][0]
    slow = copy.deepcopy(good)
    slow['perfvalues']['local:default:hpl'][0] = 10.0
    data['runs'][0]['testcases'] = [slow] + [
        copy.deepcopy(good) for _ in range(times - 1)
    ]
    path.write_text(json.dumps(data))
    return path


TWICE = (
    'runs[0].testcases[1]: HPCCCheck on local:default with gnu-openmpi (run 0) '
    'appears twice (also runs[0].testcases[0]); one ReFrame session runs a test '
    'case once'
)
DUPLICATE_READERS = {
    'compare': lambda store, path, out: (
        'compare', '--strict', '--references', store.refs, path,
    ),
    'replay': lambda store, path, out: ('replay', '--references', store.refs, path),
    'report': lambda store, path, out: (
        'report', '-o', out, '--references', store.refs, path,
    ),
    'update': lambda store, path, out: (
        'references', 'update', '--references', store.refs, '--write',
        '--min-samples', '1', '--from', path,
    ),
    'baseline': lambda store, path, out: (
        'baseline', '--references', store.refs, '--sessions', '0', '--force',
        '--from', path,
    ),
}  # fmt: skip


@pytest.mark.parametrize('command', sorted(DUPLICATE_READERS))
def test_65_a_test_case_given_twice_is_refused(tmp_path, command):
    store = Store(tmp_path)
    path = duplicated(tmp_path / 'report.json')
    out = tmp_path / 'out' / 'r.html'
    result = cb(*DUPLICATE_READERS[command](store, path, out))
    one_error(result, f'clusterbench: error: {path}: {TWICE}')
    assert not (tmp_path / 'out').exists()
    store.assert_kept()


def test_65_a_copy_in_another_run_of_the_same_index_is_refused(tmp_path):
    store = Store(tmp_path)
    path = tmp_path / 'report.json'
    run_report(path, files=('hpcc',))
    data = json.loads(path.read_text())
    data['runs'][0]['run_index'] = 0
    data['runs'].append(copy.deepcopy(data['runs'][0]))
    path.write_text(json.dumps(data))
    result = cb('compare', '--references', store.refs, path)
    one_error(
        result,
        f'clusterbench: error: {path}: runs[1].testcases[0]: HPCCCheck on '
        f'local:default with gnu-openmpi (run 0) appears twice (also '
        f'runs[0].testcases[0]); one ReFrame session runs a test case once',
    )
    store.assert_kept()


def test_65_what_one_session_writes_is_still_read(tmp_path):
    """A retry (runs[1], run_index 1, of a test that failed in runs[0]) and
    --repeat (one name, unique names HPCCCheck_0, HPCCCheck_1) are what
    ReFrame writes: read and judged as before."""
    store = Store(tmp_path)
    retried = tmp_path / 'retried.json'
    run_report(retried, files=('hpcc',))
    data = json.loads(retried.read_text())
    failed = copy.deepcopy(data['runs'][0]['testcases'][0])
    failed.update(result='fail', fail_phase='sanity', fail_reason='crashed')
    passed = data['runs'][0]['testcases'][0]
    passed['run_index'] = 1
    data['runs'] = [
        {'run_index': 0, 'testcases': [failed]},
        {'run_index': 1, 'testcases': [passed]},
    ]
    retried.write_text(json.dumps(data))
    repeated = os.path.join(
        FIXTURES, 'sessions', 'AMD-25-17', 'confirm', 'local-default-gnu-openmpi',
        'report.json',
    )  # fmt: skip
    if not os.path.exists(repeated):
        pytest.skip(f'{repeated}: not here')
    for path in (retried, repeated):
        result = cb('compare', '--references', store.refs, path)
        assert result.returncode in (0, 1), result.stdout + result.stderr
        assert 'error' not in result.stderr and 'Traceback' not in result.stderr
        assert 'HPCCCheck' in result.stdout
    store.assert_kept()


# --- 66. an output path too long, or under a regular file ---------------------


def _shown(path):
    """An output path as an error line names it: whole up to 200 characters,
    else its start and its end."""
    path = str(path)
    return path if len(path) <= 200 else f'{path[:100]}...{path[-60:]}'


def _under_a_file(tmp_path, leaf):
    (tmp_path / 'file.txt').write_text('a file\n')
    path = tmp_path / 'file.txt' / leaf
    return path, f'{path}: not a directory ({tmp_path / "file.txt"} is a file)'


def _long_name(tmp_path, leaf):
    path = tmp_path / ('x' * 300) / leaf
    return (
        path,
        f'{_shown(path)}: file name too long (300 bytes in one name, at most 255)',
    )


def _long_path(tmp_path, leaf):
    path = tmp_path.joinpath(*['d' * 200] * 21, leaf)
    size = len(os.fsencode(str(path)))
    return path, f'{_shown(path)}: path too long ({size} bytes, at most 4095)'


BAD_OUTPUTS = {
    'under-a-file': _under_a_file,
    'long-name': _long_name,
    'long-path': _long_path,
}


def _run(store, path, report):
    return (
        'run', '--results', path, '--references', store.refs, '--', *TINY_CG,
    )  # fmt: skip


def _junit(store, path, report):
    return (
        'run', '--results', store.results, '--references', store.refs,
        '--junit', path, '--', *TINY_CG,
    )  # fmt: skip


WRITERS = {
    'run-results': (_run, 'results'),
    'run-junit': (_junit, 'junit.xml'),
    'trend-o': (
        lambda store, path, report: ('trend', 'hpl', report, '-o', path),
        'trend',
    ),
    'report-o': (
        lambda store, path, report: ('report', '-o', path, report),
        'r.html',
    ),
    'references-update': (
        lambda store, path, report: (
            'references', 'update', '--references', path, '--write',
            '--min-samples', '1', '--from', report,
        ),
        'refs',
    ),
    'baseline-references': (
        lambda store, path, report: (
            'baseline', '--references', path, '--sessions', '0', '--force',
            '--from', report,
        ),
        'refs',
    ),
}  # fmt: skip


@pytest.mark.parametrize('bad', sorted(BAD_OUTPUTS))
@pytest.mark.parametrize('command', sorted(WRITERS))
def test_66_an_output_path_too_long_or_under_a_file(tmp_path, command, bad):
    store = Store(tmp_path)
    report = run_report(tmp_path / 'report.json', files=('hpcc',))
    store.before = hashes(store.refs, store.results)
    args, leaf = WRITERS[command]
    path, line = BAD_OUTPUTS[bad](tmp_path, leaf)
    before = sorted(tmp_path.rglob('*'))
    env = {'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')}
    result = cb(*args(store, path, report), env=env)
    one_error(result, f'clusterbench: error: {line}')
    assert '$ reframe' not in result.stdout  # refused before anything ran
    assert sorted(tmp_path.rglob('*')) == before  # nothing created
    store.assert_kept()

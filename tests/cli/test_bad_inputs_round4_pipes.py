"""The bad-input matrix, round 4 (issue 39), class 56: a reader that leaves
after one line (`set -o pipefail; clusterbench ... | head -1`) never turns a
regression into exit 0.

Each command writes into a pipe whose reader reads one line and closes it,
and the writer's own exit code is read: `run`, `ab` and `baseline` go on
measuring (what they print goes nowhere) and exit with their verdict;
`compare`, `references check` and `ab --judge` print more than a pipe holds
and still exit with theirs. Each is over a real regression: a SLOWER figure
against a reference, stale reference entries, an A/B judged SLOWER, a
baseline that is refused.
"""

import json
import os
import shutil
import subprocess
import tempfile

import pytest
from badinput import Store, hashes
from conftest import PROJECT
from rfm import CG_CHECKS, TINY_CG, classic_cg_references, tool
from test_bad_inputs_verdict import slower

QUIET = ('-S', 'judge_conditions=false', '-S', 'probe_host=false')
#: A pipe holds 64 KiB on Linux: an output past it is still being written
#: when the reader leaves.
PIPE_BUFFER = 65536


def own_history(tmp):
    """The environment of a measuring session kept inside *tmp*."""
    (tmp / 'locks').mkdir(exist_ok=True)
    return {
        'RFM_SQLITE_DB_FILE': str(tmp / 'results.db'),
        'CLUSTERBENCH_PERFLOGDIR': str(tmp / 'perflogs'),
        'CLUSTERBENCH_LOCK_DIR': str(tmp / 'locks'),
    }


def environment(env):
    """os.environ with *env* (a None value: unset)."""
    merged = {**os.environ, **(env or {})}
    return {key: value for key, value in merged.items() if value is not None}


def one_line_then_leave(*args, env=None):
    """`clusterbench ARGS | head -1`: (the writer's exit code, the line read,
    its stderr). The reader closes the pipe after one line; the writer is
    then waited for (a hang guard of minutes, not a timing claim)."""
    with tempfile.TemporaryFile('w+') as err:
        proc = subprocess.Popen(
            [tool('clusterbench'), *map(str, args)],
            stdout=subprocess.PIPE, stderr=err, text=True, cwd=PROJECT,
            env=environment(env),
        )  # fmt: skip
        first = proc.stdout.readline()
        proc.stdout.close()
        code = proc.wait(timeout=1800)
        err.seek(0)
        return code, first, err.read()


def whole(*args, env=None):
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        capture_output=True, text=True, cwd=PROJECT, timeout=1800,
        env=environment(env),
    )  # fmt: skip


def assert_quiet(stderr):
    assert 'Traceback' not in stderr and 'BrokenPipe' not in stderr, stderr


# --- run: measures on, and exits with its verdict ------------------------------


@pytest.mark.integration
def test_56_run_into_a_closed_pipe_measures_on_and_fails(tmp_path):
    refs = tmp_path / 'refs'
    classic_cg_references(refs, gflops=[1.0e6, -0.1, 0.1, 'GFlop/s'])
    before = hashes(refs)
    code, first, err = one_line_then_leave(
        'run', '--results', tmp_path / 'results', '--references', refs,
        '--confirm', '0', '--checks', CG_CHECKS, '--', *TINY_CG, *QUIET,
        env=own_history(tmp_path),
    )  # fmt: skip
    assert first == f'references: {refs} (--references)\n'
    assert (code, err) == (1, '')  # the SLOWER gflops, judged after the reader left
    (report,) = (tmp_path / 'results' / 'local').glob('*/report.json')
    cases = json.loads(report.read_text())['runs'][0]['testcases']
    (case,) = [c for c in cases if not c['fixture']]
    assert case['result'] == 'fail'
    assert case['perfvalues']['local:default:gflops'][-1] == 'fail'
    assert hashes(refs) == before


# --- ab, and the stored session judged again ------------------------------------

CG = [
    '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1$',
    '-p', 'gnu-openmpi', *QUIET,
]  # fmt: skip


@pytest.fixture(scope='module')
def ab_into_a_closed_pipe(tmp_path_factory):
    """`clusterbench ab | head -1`: B solves class W, 8x the rows of S (its
    time is SLOWER, as tests/sessions/test_ab_run.py shows)."""
    tmp = tmp_path_factory.mktemp('ab')
    done = one_line_then_leave(
        'ab', '--results', tmp / 'results', '--checks', CG_CHECKS,
        '--settings', 'problem_class=S', 'problem_class=W', '--repeats', '3',
        '--', *CG,
        env=own_history(tmp),
    )  # fmt: skip
    (prefix,) = (tmp / 'results' / 'local').iterdir()
    return tmp, prefix, done


@pytest.mark.integration
def test_56_ab_into_a_closed_pipe_measures_every_leg_and_fails(ab_into_a_closed_pipe):
    _, prefix, (code, first, err) = ab_into_a_closed_pipe
    assert first == (
        "references: reference_data (the current directory's: references of local)\n"
    )
    assert (code, err) == (1, '')
    plan = json.loads((prefix / 'ab.json').read_text())
    assert [leg['arm'] for leg in plan['legs']] == list('ABBABAABABBA')
    for leg in plan['legs']:
        assert (prefix / leg['report']).is_file()


def _many_tests(report, copies):
    """The leg *report* with each test case *copies* times, each its own
    test (a parameter `copy`), so that the judged table is long."""
    data = json.loads(report.read_text())
    for run in data['runs']:
        cases = []
        for case in run['testcases']:
            if case.get('fixture'):
                cases.append(case)
                continue
            for n in range(copies):
                named = {key: f'{case[key]} %copy={n}' for key in ('name',)}
                for key in ('display_name', 'unique_name'):
                    if key in case:
                        named[key] = f'{case[key]}_{n}'
                cases.append({**case, **named})
        run['testcases'] = cases
    report.write_text(json.dumps(data))


@pytest.mark.integration
def test_56_ab_judge_into_a_closed_pipe_fails(ab_into_a_closed_pipe, tmp_path):
    tmp, prefix, _ = ab_into_a_closed_pipe
    stored = tmp_path / prefix.name
    shutil.copytree(prefix, stored)
    plan = json.loads((stored / 'ab.json').read_text())
    for leg in plan['legs']:
        _many_tests(stored / leg['report'], copies=150)
    before = hashes(stored)
    full = whole('ab', '--judge', stored)
    assert full.returncode == 1, full.stdout[-3000:] + full.stderr
    assert len(full.stdout) > PIPE_BUFFER
    code, first, err = one_line_then_leave('ab', '--judge', stored)
    assert first == '\n'  # the blank line above `A/B session: ...`
    assert (code, err) == (1, '')
    assert hashes(stored) == before


# --- baseline: runs its sessions, and is refused -------------------------------


@pytest.mark.integration
def test_56_baseline_into_a_closed_pipe_records_and_is_refused(tmp_path):
    refs = tmp_path / 'refs'
    code, first, err = one_line_then_leave(
        'baseline', '--system', 'local', '--references', refs,
        '--results', tmp_path / 'results', '--sessions', '1', '--spacing', '0',
        '--checks', CG_CHECKS, '--', *TINY_CG, *QUIET,
        env={**own_history(tmp_path), 'RFM_REFERENCE_PREFIX': None},
    )  # fmt: skip
    assert first.strip()
    # One session is fewer than a baseline needs: refused, as without a pipe.
    assert code == 2, err
    (line,) = err.splitlines()
    assert line.startswith(
        'clusterbench: error: baseline: 5 of 5 figures have fewer than 3 '
        'undisturbed sessions (fewest 1: '
    ), line
    assert len(list((tmp_path / 'results' / 'local').glob('*/report.json'))) == 1
    assert not (refs / 'local').exists()


# --- compare and references check: more than a pipe holds -----------------------


def test_56_compare_into_a_closed_pipe_fails(tmp_path):
    store = Store(tmp_path)
    path = slower(store, copies=300)
    assert len(whole('compare', '-v', path).stdout) > PIPE_BUFFER
    code, first, err = one_line_then_leave('compare', '-v', path)
    assert first == (
        'references: as recorded in the report by ReFrame (no --references or '
        '$RFM_REFERENCE_PREFIX)\n'
    )
    assert (code, err) == (1, '')
    store.assert_kept()


def test_56_references_check_into_a_closed_pipe_fails_on_stale_entries(tmp_path):
    store = Store(tmp_path)
    path = store.file('hpcc')
    with open(path, 'a') as f:
        for n in range(3000):
            f.write(f'NoSuchCheck{n}:\n  local:default:\n')
            f.write('    time: [1.0, -0.1, 0.1, s]\n')
    store.before = hashes(store.refs, store.results)
    full = whole('references', 'check', '--references', store.refs)
    assert full.returncode == 1, full.stdout[-3000:] + full.stderr
    assert len(full.stdout) > PIPE_BUFFER
    code, first, err = one_line_then_leave(
        'references', 'check', '--references', store.refs
    )
    assert first == full.stdout.splitlines(keepends=True)[0]
    assert (code, err) == (1, '')
    store.assert_kept()


def test_56_a_command_stopped_by_its_reader_before_deciding_is_never_0(tmp_path):
    # A broken pipe that reaches run_command before the command returned its
    # exit code: it stopped before judging, so it says so (141, as a shell
    # reports a death by SIGPIPE), never 0.
    script = (
        'import sys\n'
        'from clusterbench.core import errors\n'
        'def before_deciding(args):\n'
        '    raise BrokenPipeError\n'
        'sys.exit(errors.run_command("clusterbench", before_deciding, None))\n'
    )
    done = subprocess.run(
        [os.path.join(os.path.dirname(tool('clusterbench')), 'python'), '-c', script],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (141, '')
    assert_quiet(done.stderr)

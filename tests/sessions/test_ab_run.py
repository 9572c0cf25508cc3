"""`clusterbench ab` on this machine: real ReFrame sessions of the CG solver
(class S, one rank), A and B in ABBA blocks.

A/B: B solves class W (8x the rows of S): a real change of work that the
paired interval resolves (time SLOWER, the iteration count FLAGGED, exit 1).
A/A: both arms the same (class S too: the iteration count is what it
resolves exactly, whatever the size); the stored session judged again gives
the same table. Bad input is one line and exit 2.
"""

import csv
import io
import json
import os
import re

import pytest
from rfm import clusterbench

from clusterbench.judging import paired

CG = [
    '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1$',
    '-S', 'judge_conditions=false', '-S', 'probe_host=false',
]  # fmt: skip
CHECKS = 'reframe_checks/cgsolver.py'


def ab(tmp, *args):
    (tmp / 'locks').mkdir(exist_ok=True)
    env = {
        'CLUSTERBENCH_LOCK_DIR': str(tmp / 'locks'),
        'RFM_SQLITE_DB_FILE': str(tmp / 'results.db'),
        'CLUSTERBENCH_PERFLOGDIR': str(tmp / 'perflogs'),
    }
    # One check file: each of the many sessions loads only what it runs.
    where = ['--results', str(tmp / 'results'), '--checks', CHECKS]
    return clusterbench('ab', *where, *args, env=env)


def session(tmp):
    (system,) = os.listdir(tmp / 'results')
    (stamp,) = os.listdir(tmp / 'results' / system)
    return tmp / 'results' / system / stamp


def rows_of(text):
    return {row['variable']: row for row in csv.DictReader(io.StringIO(text))}


@pytest.fixture(scope='module')
def class_s_against_w(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('ab')
    done = ab(
        tmp,
        '--settings', 'problem_class=S', 'problem_class=W',
        '--repeats', '3', '--format', 'csv', '--', '-p', 'gnu-openmpi', *CG,
    )  # fmt: skip
    return tmp, done


def test_more_work_in_b_is_resolved_as_slower(class_s_against_w):
    tmp, done = class_s_against_w
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    assert done.stdout.startswith('test,variable')  # ReFrame's output aside
    csv_text = done.stdout
    rows = rows_of(csv_text)
    assert rows['time']['verdict'] == 'SLOWER'
    assert float(rows['time']['CI low']) > 1
    assert rows['iterations']['verdict'] == 'FLAGGED'  # W needs more
    assert rows['time']['pairs'] == '3'
    assert rows['time']['confidence'] == '0.99'  # the interval's level


def test_the_session_is_stored_leg_by_leg_and_judged_again(class_s_against_w):
    tmp, done = class_s_against_w
    prefix = session(tmp)
    with open(prefix / 'ab.json') as f:
        plan = json.load(f)
    assert [leg['arm'] for leg in plan['legs']] == list('ABBABAABABBA')
    assert plan['arms']['B']['args'] == ['-S', 'problem_class=W']
    for leg in plan['legs']:
        assert (prefix / leg['report']).is_file()
    again = ab(tmp, '--judge', str(prefix), '--format', 'csv')
    assert again.returncode == 1
    first = done.stdout[done.stdout.index('test,variable') :]
    assert again.stdout.strip() == first.strip()
    # The stored legs judged at 95 %: the same pairs, a narrower interval.
    narrow = ab(tmp, '--judge', str(prefix), '--confidence', '95', '--format', 'csv')
    wide_row, narrow_row = rows_of(first)['time'], rows_of(narrow.stdout)['time']
    assert narrow_row['confidence'] == '0.95' and narrow_row['B/A'] == wide_row['B/A']
    assert float(narrow_row['resolvable']) < float(wide_row['resolvable'])


def test_a_against_a_resolves_no_change_in_the_work(tmp_path):
    # --resolve asks every figure for ±0.1 %: the iteration count has it
    # after two blocks (no change at all), the time never, so the session
    # runs to --max-blocks and says why.
    done = ab(
        tmp_path,
        '--environs', 'gnu-openmpi', 'gnu-openmpi', '--repeats', '2',
        '--resolve', '0.001', '--max-blocks', '3', '--',
        '-S', 'problem_class=S', *CG,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr
    text = done.stdout
    assert 'A: --system local -p gnu-openmpi' in text
    assert 'B/A [99 % CI]' in text
    line = next(x for x in text.splitlines() if x.startswith('CGSolverCheck  iter'))
    assert 'no difference resolved (±0.0 %)' in line
    # Every figure but the iteration count (time, rates, residual, ...).
    assert re.search(
        r'\[after block 2: \d figures not within ±0.1 % yet \(the widest', text
    )
    assert (
        '3 blocks (ABBA, BAAB in turn), until every figure resolved ±0.1 % '
        '(at most 3 blocks); 12 legs run'
    ) in text
    for variable in ('time', 'gflops', 'bandwidth'):
        row = next(x for x in text.splitlines() if f'  {variable}  ' in x)
        assert ' 3 ' in row  # three pairs, none left out
    with open(session(tmp_path) / 'ab.json') as f:
        assert json.load(f)['resolve'] == 0.001


def test_a_block_with_a_disturbed_leg_is_measured_again(tmp_path):
    # B's legs are all DISTURBED (the check's own variable, as its conditions
    # would set it): every block is measured again, up to --max-blocks.
    done = ab(
        tmp_path,
        '--settings', 'wait_quiet=0', 'disturbed=steal 50 %',
        '--repeats', '2', '--max-blocks', '3', '--strict', '--',
        '-S', 'problem_class=S', '-p', 'gnu-openmpi', *CG,
    )  # fmt: skip
    text = done.stdout
    assert done.returncode == 3, text[-3000:] + done.stderr  # nothing paired
    assert '[block 1: a DISTURBED leg (steal 50 %); 2 undisturbed blocks to go' in text
    assert '3 blocks (ABBA, BAAB in turn), 3 with a DISTURBED leg' in text
    assert '12 legs run' in text
    with open(session(tmp_path) / 'ab.json') as f:
        plan = json.load(f)
    assert plan['max_blocks'] == 3 and len(plan['legs']) == 12
    row = next(x for x in text.splitlines() if '  time  ' in x)
    assert 'not paired' in row and '0, 6 disturbed left out' in row


def test_more_blocks_until_enough_undisturbed_or_the_limit():
    assert paired.more_blocks(8, 7, 0)
    assert not paired.more_blocks(8, 8, 0)  # eight undisturbed blocks
    assert paired.more_blocks(8, 8, 1)  # one was disturbed: one more
    assert not paired.more_blocks(8, 16, 9)  # twice the blocks asked for
    assert not paired.more_blocks(8, 10, 3, limit=10)
    # A figure not resolved yet: more blocks, up to four times those asked for.
    assert paired.more_blocks(8, 8, 0, paired.block_limit(8, 0.05), resolved=False)
    assert not paired.more_blocks(8, 32, 0, paired.block_limit(8, 0.05), False)


def test_a_figure_is_unresolved_while_its_interval_is_wider_than_asked():
    def samples(ratios, variable='time'):
        return [
            paired.Sample(arm, block, 'T', variable, 's', 1.0 if arm == 'A' else r)
            for block, r in enumerate(ratios)
            for arm in 'AB'
        ]

    steady = samples([1.10, 1.101, 1.099, 1.10])
    noisy = samples([1.0, 1.3, 0.8, 1.1], 'bandwidth')
    single = [paired.Sample('A', 0, 'T', 'count', '', 3.0)]  # never pairs
    rows = paired.judge(steady + noisy + single)
    wide = paired.unresolved(rows, 0.05)
    assert [row[1] for row in wide] == ['bandwidth']
    assert paired.unresolved(rows, 10.0) == []


@pytest.mark.parametrize(
    'args, message',
    [
        (['--repeats', '2'], 'ab: give exactly one of --environs'),
        (['--environs', 'a', 'b', '--repeats', '1'], '--repeats 1: at least 2'),
        (['--judge', '/nonexistent'], '/nonexistent/ab.json: no such file'),
        (
            ['--environs', 'a', 'b', '--repeats', '4', '--max-blocks', '3'],
            '--max-blocks 3: at least --repeats (4)',
        ),
        (['--environs', 'a;b', 'b'], "--environs: 'a;b': not a ReFrame name"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, message):
    done = ab(tmp_path, *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / 'results').exists()


def test_blocks_run_until_enough_undisturbed_then_until_resolved():
    from clusterbench.sessions.ab import Blocks

    blocks = Blocks(2, resolve=0.05)
    assert blocks.most == 8  # four times the blocks asked for
    ratios = iter([1.0, 1.3, 0.8, 1.1, 1.1, 1.1, 1.1, 1.1])
    samples = []

    def so_far():
        return samples

    while blocks.due():
        r = next(ratios)
        samples += [
            paired.Sample('A', blocks.run, 'T', 'time', 's', 1.0),
            paired.Sample('B', blocks.run, 'T', 'time', 's', r),
        ]
        blocks.ended(blocks.run == 0, so_far)  # the first one disturbed
    # Three blocks make two undisturbed ones; the spread of 1.3 and 0.8 keeps
    # the time unresolved until the limit.
    assert blocks.run == 8 and blocks.disturbed == 1
    assert [row[1] for row in blocks.wide] == ['time']
    again = blocks.fresh()
    assert (again.run, again.disturbed, again.wide) == (0, 0, [])

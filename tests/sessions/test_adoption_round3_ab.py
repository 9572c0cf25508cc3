"""`clusterbench ab` on a loaded host (issue 41): every leg DISTURBED.

Real ReFrame legs of the CG solver (class S, one rank), each marked as a
loaded host marks it (the checks' own ``disturbed`` variable, as the run
conditions would set it). The iteration count does not depend on time, so it
is still paired; no figure of merit is, and the session says so with what to
do next and exits 3 (could not judge), never 0 as a pass would. It says up
front how many legs it runs and, after the first block, how long the rest
takes; the header names the options both arms share.
"""

import csv
import io

from test_ab_run import CG, ab

from clusterbench.core import figures
from clusterbench.judging import paired, vocabulary

SHARED = ('-S', 'problem_class=S', '-p', 'gnu-openmpi', '-S', 'disturbed=steal 50 %')


def test_every_leg_disturbed_is_no_pass_and_keeps_the_iteration_count(tmp_path):
    done = ab(
        tmp_path,
        '--settings', 'wait_quiet=0', 'wait_quiet=0',
        '--repeats', '2', '--max-blocks', '2', '--', *SHARED, *CG,
    )  # fmt: skip
    text = done.stdout
    assert done.returncode == 3, text[-3000:] + done.stderr
    # Up front: how much it runs; after the first block: how long the rest.
    assert '[A/B: 2 blocks of 4 legs (8 ReFrame sessions), at most 2 blocks' in text
    assert '[block 1 of 2 took ' in text and ' left' in text
    # The header: what B changes, and what both arms share.
    both = next(x for x in text.splitlines() if x.startswith('  both: '))
    assert "-S problem_class=S -p gnu-openmpi -S 'disturbed=steal 50 %'" in both
    rows = {x.split()[1]: x for x in text.splitlines() if x.startswith('CGSolverCheck')}
    assert 'not paired' in rows['time'] and 'not paired' in rows['gflops']
    # Deterministic: the same whatever the load, so its pairs are kept.
    assert 'no difference resolved' in rows['iterations'], rows['iterations']
    assert '  2  ' in rows['iterations'] + '  '
    last = text.rstrip().splitlines()[-1]
    assert last.startswith('nothing judged: every leg was DISTURBED (steal 50 %)'), last
    assert 'wait_quiet' in last and 'exit 3' in last


def test_the_same_legs_as_csv_say_it_on_stderr(tmp_path):
    done = ab(
        tmp_path,
        '--settings', 'wait_quiet=0', 'wait_quiet=0', '--format', 'csv',
        '--repeats', '2', '--max-blocks', '2', '--', *SHARED, *CG,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr
    rows = {r['variable']: r for r in csv.DictReader(io.StringIO(done.stdout))}
    assert rows['iterations']['pairs'] == '2'
    assert rows['time']['verdict'] == 'not paired'
    assert 'nothing judged: every leg was DISTURBED' in done.stderr


def test_an_iteration_count_is_declared_deterministic():
    found = vocabulary.declaration('iterations', 'iterations')
    assert found.deterministic
    assert not vocabulary.declaration('gflops', 'GFlop/s').deterministic
    try:
        figures.Figure('t', 's', figures.LOWER, deterministic=True)
    except figures.DeclarationError as err:
        assert 'deterministic' in str(err)
    else:
        raise AssertionError('a time declared deterministic was accepted')
    # Its disturbed samples are paired; a time's are left out.
    samples = [
        paired.Sample(arm, block, 'T', var, unit, 10.0, 'steal 50 %')
        for block in (0, 1)
        for arm in 'AB'
        for var, unit in (('iterations', 'iterations'), ('time', 's'))
    ]
    rows = {row[1]: row for row in paired.judge(samples)}
    assert rows['iterations'][paired.PAIRS] == 2
    assert rows['time'][paired.PAIRS] == 0 and rows['time'][-1] == paired.NOT_PAIRED

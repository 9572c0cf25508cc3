"""`clusterbench ab` says what docs/ab.md says: SLOWER for a speed that got
worse under B, WORSE for a figure of merit that is no speed (an efficiency),
FLAGGED only for a figure with no better direction (an iteration count).

The real `clusterbench ab --judge` on stored A/B sessions whose legs are CG
solver run reports as ReFrame writes them (tests/sessions/test_bad_inputs_round4_ab.py
builds them), each leg given the solver's portable efficiency
`job_triad_efficiency` (%, higher is better).
"""

import json

from badinput import hashes
from test_bad_inputs_round4_ab import ab_session, cb, strict_json

EFFICIENCY = 'job_triad_efficiency'


def with_efficiency(prefix, a, b):
    """Every leg of the session at *prefix* gets the efficiency *a* % (arm A)
    or *b* % (arm B), with a little noise that differs between legs."""
    plan = json.loads((prefix / 'ab.json').read_text())
    for number, leg in enumerate(plan['legs']):
        report = prefix / leg['report']
        data = json.loads(report.read_text())
        value = (a if leg['arm'] == 'A' else b) * (1 + 0.003 * (number % 3))
        for case in data['runs'][0]['testcases']:
            part = f'{case["system"]}:{case["partition"]}'
            case['perfvalues'][f'{part}:{EFFICIENCY}'] = [
                value, None, None, None, '%', 'pass'
            ]  # fmt: skip
        report.write_text(json.dumps(data))
    return prefix


def verdicts(prefix):
    done = cb('ab', '--judge', prefix, '--format', 'json')
    assert 'Traceback' not in done.stdout + done.stderr
    return done.returncode, {
        r['variable']: r['verdict'] for r in strict_json(done.stdout)
    }


def test_an_efficiency_worse_under_b_is_worse(tmp_path):
    # B is 0.7 times A in every figure: a rate down, a time down, an
    # efficiency down, an iteration count changed.
    prefix = with_efficiency(ab_session(tmp_path / 'ab', a=1.0, b=0.7), 60.0, 42.0)
    before = hashes(tmp_path)
    code, found = verdicts(prefix)
    assert code == 1
    assert found[EFFICIENCY] == 'WORSE'
    assert found['gflops'] == 'SLOWER'
    assert found['time'] == 'FASTER'
    assert found['iterations'] == 'FLAGGED'
    table = cb('ab', '--judge', prefix)
    assert table.returncode == 1
    (row,) = [x for x in table.stdout.splitlines() if f' {EFFICIENCY} ' in x]
    assert row.endswith('WORSE'), row
    assert 'WORSE' in table.stdout.splitlines()[-1]
    assert hashes(tmp_path) == before


def test_an_efficiency_alone_worse_fails_the_gate(tmp_path):
    # Every other figure the same in A and B: the efficiency alone decides.
    session = ab_session(tmp_path / 'ab', values={'A': 10.0, 'B': 10.0})
    prefix = with_efficiency(session, 60.0, 42.0)
    code, found = verdicts(prefix)
    assert found[EFFICIENCY] == 'WORSE'
    assert not {v for k, v in found.items() if k != EFFICIENCY} & {
        'SLOWER',
        'FLAGGED',
        'WORSE',
    }, found
    assert code == 1


def test_an_efficiency_better_under_b_is_faster_and_exit_0(tmp_path):
    session = ab_session(tmp_path / 'ab', values={'A': 10.0, 'B': 10.0})
    prefix = with_efficiency(session, 42.0, 60.0)
    code, found = verdicts(prefix)
    assert found[EFFICIENCY] == 'FASTER'
    assert code == 0

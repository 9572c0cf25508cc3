"""Generated hostile inputs to what clusterbench keeps between commands and
to its numbers (issue 39): a stored A/B session's ``ab.json`` and every
numeric option. (Journals of reference updates are fuzzed beside their
other tests: tests/references/test_bad_inputs_round4_refs.py, class 50.)

Each input starts from a valid one and is broken in one place (a wrong type
or an extreme value at a random key, a path that climbs out, a temporary
file that is not the one the journal recorded). The property, as in
tests/cli/test_fuzz_hostile.py (whose harness and budget this file shares): a
normal exit with its table, or exit 2 with exactly one
``clusterbench: error:`` line; never a traceback, never exit 0 for an input
that is certainly invalid, and no file outside what the command may write
changed.
"""

import argparse
import json

import pytest
from hostile import Hostile
from hostile_trees import SCALARS, VALUES, a_path, at, replaced, to_json
from hypothesis import given
from hypothesis import strategies as st
from test_bad_inputs_round4_ab import ab_session
from test_bad_inputs_round4_options import OPTIONS
from test_fuzz_hostile import Budget, assert_one_line_or_judged, fuzz, run_cli

# ------------------------------------------------------------------- ab.json


@pytest.fixture(scope='module')
def stored_ab(tmp_path_factory):
    """A valid stored A/B session (3 blocks, B 10 % slower) and its plan."""
    prefix = ab_session(tmp_path_factory.mktemp('fuzzab') / 'ab', b=1.1)
    plan = json.loads((prefix / 'ab.json').read_text())
    return prefix, plan


def _legs_reports(prefix):
    return {
        p.relative_to(prefix): p.read_bytes()
        for p in prefix.rglob('*')
        if p.is_file() and p.name != 'ab.json'
    }


#: Keys whose every value of another type makes the plan invalid.
_REQUIRED = {'arms', 'legs', 'repeats'}


@st.composite
def hostile_plans(draw, plan):
    """*plan* broken in one place: a value of another type or an extreme at
    a random key, a key removed, a leg's report that climbs out, or the text
    cut short."""
    how = draw(st.sampled_from(['replace', 'remove', 'climb', 'truncate']))
    if how == 'truncate':
        text = json.dumps(plan)
        cut = draw(st.integers(min_value=0, max_value=len(text) - 1))
        return Hostile(text[:cut], 'truncated', f'{cut} characters', 'ab.json', True)
    if how == 'climb':
        leg = draw(st.integers(min_value=0, max_value=len(plan['legs']) - 1))
        where = draw(st.sampled_from(['../../etc/passwd', '/etc/passwd', '..', '']))
        tree = replaced(plan, ('legs', leg, 'report'), where)
        return Hostile(to_json(tree), 'climbing report', where, f'legs[{leg}]', True)
    path = draw(a_path(plan).filter(bool))
    if how == 'remove':
        parent = at(plan, path[:-1])
        if isinstance(parent, list):
            path = path[:-1]
        tree = json.loads(json.dumps(plan))
        del at(tree, path[:-1])[path[-1]]
        definite = path[0] in _REQUIRED and len(path) == 1
        return Hostile(to_json(tree), 'removed', repr(path[-1]), repr(path), definite)
    value = draw(st.one_of(SCALARS, VALUES))
    old = at(plan, path)
    tree = replaced(plan, path, value)
    # A list or object where the plan has one may still be valid; a scalar
    # of another JSON type where the plan keeps a list or object is not.
    definite = isinstance(old, (list, dict)) and not isinstance(value, (list, dict))
    return Hostile(to_json(tree), 'replaced', repr(value)[:40], repr(path), definite)


AB = Budget('ab --judge')


@fuzz
@given(data=st.data())
def test_ab_judge_on_generated_hostile_plans(stored_ab, data):
    if AB.spent():
        return
    prefix, plan = stored_ab
    hostile = data.draw(hostile_plans(plan))
    reports = _legs_reports(prefix)

    def body():
        (prefix / 'ab.json').write_text(hostile.text, errors='surrogatepass')
        outcome = run_cli(['ab', '--judge', str(prefix)])
        assert_one_line_or_judged(outcome, hostile)
        assert _legs_reports(prefix) == reports, f'{hostile}: a leg changed'

    try:
        AB.running(body)
    finally:
        (prefix / 'ab.json').write_text(json.dumps(plan))


def test_the_valid_plan_is_judged(stored_ab):
    """The base every input breaks is itself judged (B 10 % slower)."""
    prefix, _ = stored_ab
    outcome = run_cli(['ab', '--judge', str(prefix)])
    assert outcome.code == 1 and not outcome.escaped, outcome.err
    assert 'SLOWER' in outcome.out


# --------------------------------------------------------- numeric options

#: Texts a user (or a script gone wrong) gives a numeric option.
NUMBER_TEXTS = st.one_of(
    st.sampled_from(['nan', 'NaN', '-nan', 'inf', '-inf', 'infinity', '1e400',
                     '-1e400', '1e-400', '0', '-0', '-1', '1' * 5000, '0x10',
                     '1_000', ' 1', '', '١', '1e308', '5e-324']),
    st.floats().map(repr),
    st.integers().map(str),
    st.text(max_size=8),
)  # fmt: skip


@fuzz
@given(option=st.sampled_from(OPTIONS), text=NUMBER_TEXTS)
def test_every_numeric_option_takes_a_number_in_range_or_refuses_it(option, text):
    """The type argparse calls: a finite value within the option's bounds,
    or argparse's refusal (ArgumentTypeError or ValueError: one line naming
    the option), never another exception."""
    (prog, name), kind = option
    try:
        value = kind(text)
    except (argparse.ArgumentTypeError, ValueError):
        return
    if isinstance(value, str):  # a word the option takes (--floor kind)
        return
    assert value == value and abs(value) != float('inf'), (prog, name, text, value)
    within = getattr(kind, 'within', None)
    if within is not None:
        assert within(value), (prog, name, text, value)


OPTIONS_CLI = Budget('numeric options on the command line')

#: Options of commands that judge stored data (cheap to run for real).
_JUDGING = ['--detection-threshold', '--confidence']


@fuzz
@given(option=st.sampled_from(_JUDGING), text=NUMBER_TEXTS)
def test_ab_judge_with_a_generated_number(stored_ab, option, text):
    """`ab --judge` with a generated number: judged, or refused by argparse
    (exit 2); never a traceback, and `--strict` never exits 0 on a session
    where B is 10 % slower."""
    if OPTIONS_CLI.spent():
        return
    prefix, _ = stored_ab

    def body():
        outcome = run_cli(
            ['ab', '--judge', str(prefix), '--strict', f'{option}={text}']
        )
        assert not outcome.escaped, outcome.escaped
        assert 'Traceback' not in outcome.text
        assert outcome.code in (1, 2, 3), (option, text, outcome.code, outcome.err)
        if outcome.code == 2:
            assert f'argument {option}' in outcome.err, outcome.err

    OPTIONS_CLI.running(body)

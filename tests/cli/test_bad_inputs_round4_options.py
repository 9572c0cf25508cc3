"""The bad-input matrix, round 4 (issue 39), class 58: every numeric option
of every command refuses NaN, an infinity, a negative value where none makes
sense and an absurd size, in argparse's one error line naming the option,
exit 2, before anything runs.

The options are found in the parsers themselves (every parser of
clusterbench/cli): an option added tomorrow is tried here without a line of
this file changing.
"""

import argparse
import importlib
import os
import pkgutil
import re
import subprocess
import sys

import pytest
from badinput import hashes
from conftest import PROJECT
from rfm import tool

import clusterbench.cli as cli
from clusterbench.cli import numbers

CLI = os.path.join(PROJECT, 'clusterbench', 'cli')


def _modules():
    return [
        importlib.import_module(f'clusterbench.cli.{info.name}')
        for info in pkgutil.iter_modules([CLI])
        if not info.name.startswith('_')
    ]


def _parsers():
    """Every parser of the command line, top ones first: `clusterbench`'s own
    and those of each module with a program of its own (``parser()``)."""
    tops = [cli.parser()]
    tops += [m.parser() for m in _modules() if hasattr(m, 'parser')]
    found = []
    while tops:
        parser = tops.pop(0)
        found.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                tops += list(dict.fromkeys(action.choices.values()))
    return found


def _numeric(action):
    """An option that takes a number: one with a type argparse calls
    (int, float or a function of the project's), not a word among choices."""
    if not action.option_strings or action.type in (None, str) or action.choices:
        return False
    if action.type in (int, float) or isinstance(action.type, numbers.Number):
        return True
    # Another type of the project's is one if it reads a number; one that
    # reads words (a comma list of resources) is not.
    for text in ('1', '0.5', '100', '3600'):
        try:
            if isinstance(action.type(text), (int, float)):
                return True
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
    return False


OPTIONS = sorted(
    {
        (parser.prog, action.option_strings[-1]): action.type
        for parser in _parsers()
        for action in parser._actions
        if _numeric(action)
    }.items()
)


def _command(prog):
    """The command line that runs the parser named *prog*."""
    words = prog.split()
    if words[:2] == ['python', '-m']:
        return [sys.executable, '-m', *words[2:]]
    assert words[0] == 'clusterbench', prog
    return [tool('clusterbench'), *words[1:]]


def _values(kind):
    values = ['nan', 'inf', '-inf', '1e400']
    if getattr(kind, 'lowest', 0) >= 0:
        values.append('-1')
    return values


def test_every_module_with_a_parser_shows_it():
    """A module of clusterbench/cli that makes its own ArgumentParser does so
    in ``parser()``, where the test above finds its options."""
    for module in _modules():
        with open(module.__file__) as f:
            source = f.read()
        if 'ArgumentParser(' in source:
            assert hasattr(module, 'parser'), module.__name__


def test_the_options_were_found():
    found = {option for _, option in (key for key, _ in OPTIONS)}
    assert {
        '--detection-threshold',
        '--max-change',
        '--repeats',
        '--min-shift',
    } <= found
    assert {'--z', '--interval', '--quiet-for', '--nodes', '--percent'} <= found


def test_every_numeric_option_has_a_range():
    """Each is a cli.numbers type: finite, within its bounds."""
    unchecked = [key for key, kind in OPTIONS if not isinstance(kind, numbers.Number)]
    assert not unchecked


@pytest.mark.parametrize(
    'prog, option, value',
    [
        (prog, option, value)
        for (prog, option), kind in OPTIONS
        for value in _values(kind)
    ],
)
def test_a_numeric_option_refuses_what_is_no_number_of_its_kind(
    tmp_path, prog, option, value
):
    before = hashes(PROJECT + '/reference_data')
    done = subprocess.run(
        [*_command(prog), f'{option}={value}'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if 'error' in line]
    said = re.escape(f'{prog}: error: argument {option}: ')
    pattern = rf'{said}.+, not {re.escape(repr(value))}'
    assert len(errors) == 1 and re.fullmatch(pattern, errors[0]), done.stderr
    assert 'Traceback' not in done.stderr + done.stdout
    assert not os.listdir(tmp_path)
    assert hashes(PROJECT + '/reference_data') == before

"""No arrow climbs back: the programs job scripts run on the nodes are the
`cli` modules themselves (`python -m clusterbench.cli.hwinfo`), which call
down into the package that does the work; no library module names `cli`,
and the person's table and the machines' formats import one way."""

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / 'clusterbench'
PROGRAMS = {
    'hwinfo': 'clusterbench.machine.hwinfo',
    'energy': 'clusterbench.machine.energy',
    'conditions': 'clusterbench.noisyhost.conditions',
    'spackenvs': 'clusterbench.site.spackenv',
}


def _imported(path):
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f'{node.module}.{alias.name}' for alias in node.names)
    return found


def test_no_library_module_imports_cli():
    # Not even a package's __main__.py: the programs are cli modules.
    upward = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob('*.py')
        if path.parts[-2] != 'cli'
        and any(n.startswith('clusterbench.cli') for n in _imported(path))
    )
    assert upward == []


def test_the_views_import_one_way():
    judging = PACKAGE / 'judging'
    assert 'clusterbench.judging.machineview' in _imported(judging / 'view.py')
    assert not any(
        n.startswith('clusterbench.judging.view')
        for n in _imported(judging / 'machineview.py')
    )


def _run(*args):
    return subprocess.run(
        [sys.executable, '-m', *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize('program', sorted(PROGRAMS))
def test_the_job_side_program_is_the_cli_module(program):
    if program == 'spackenvs':
        # No parser of its own: the project's environments, checked.
        done = _run('clusterbench.cli.spackenvs')
        assert done.returncode == 0, done.stderr
        assert 'their locks follow the conventions' in done.stdout
        return
    done = _run(f'clusterbench.cli.{program}', '--help')
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f'usage: python -m clusterbench.cli.{program} ')


@pytest.mark.parametrize('program', sorted(PROGRAMS))
def test_the_library_module_names_the_program(program):
    done = _run(PROGRAMS[program])
    assert done.returncode == 2
    assert done.stderr == (
        f'clusterbench: error: {PROGRAMS[program]} is a library: '
        f'run python -m clusterbench.cli.{program}\n'
    )

"""`-S problem_class=S` on an NPB run is refused, not run as class C
(issue 41): ReFrame only warns of a variable no test has; `clusterbench
run` lists the selection first and refuses a name that every selected
test left unset, naming the variable the checks do have."""

import glob
import os

import pytest
from rfm import clusterbench

from clusterbench.core import paths
from clusterbench.core.errors import ClusterbenchError
from clusterbench.sessions import setvars

pytestmark = pytest.mark.integration


def test_a_variable_no_selected_check_has_is_refused_before_anything_runs(tmp_path):
    results = tmp_path / 'results'
    proc = clusterbench(
        'run', '--results', results, '--', '-n', '^NPBCheck', '-S', 'problem_class=S'
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith('clusterbench: error: -S problem_class: NPBCheck')
    assert proc.stderr.rstrip().endswith('(did you mean -S npb_class?)'), proc.stderr
    assert proc.stderr.count('\n') == 1 and 'Traceback' not in proc.stderr
    # Refused before a session: nothing measured, nothing stored.
    assert not glob.glob(os.path.join(results, '*', '*', 'report.json'))


def test_a_variable_of_some_selected_checks_is_theirs():
    config, checks = paths.system_config('local'), paths.default('checks')
    # The CG solver has problem_class; NPB beside it does not: not refused.
    setvars.check(
        config,
        checks,
        'local',
        ['-n', 'CGSolverCheck|NPBCheck', '-S', 'problem_class=S'],
    )
    with pytest.raises(ClusterbenchError, match=r'-S problem_class: NPBCheck'):
        setvars.check(
            config, checks, 'local', ['-n', '^NPBCheck', '-S', 'problem_class=S']
        )
    # A name aimed at one class is ReFrame's to judge.
    setvars.check(
        config, checks, 'local', ['-n', '^NPBCheck', '-S', 'NPBCheck.nosuch=1']
    )

"""Running the real ReFrame of this environment on the project's checks."""

import os
import subprocess
import sys

import yaml
from conftest import PROJECT

from clusterbench.testcluster.testing import run_reframe

BIN = os.path.dirname(sys.executable)
CONFIG = os.path.join(PROJECT, 'site_configs', 'local.py')
#: Where a check's reference file is in a reference directory, as messages
#: name it (the one place to change when the layout changes).
REFERENCE_FILE = '{refs}/{system}/{check}.yaml'


#: One quick configuration of our CG solver (class S, one rank): the run
#: that end-to-end tests of references and verdicts make.
TINY_CG = (
    '-n',
    'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
    '-p',
    'gnu-openmpi',
    '-S',
    'problem_class=S',
)
#: The one check file TINY_CG selects from: loading only it saves the 2 s
#: that loading every check file takes, per session.
CG_CHECKS = os.path.join(PROJECT, 'reframe_checks', 'cgsolver.py')


def reference_file(refs, check, system='local'):
    return REFERENCE_FILE.format(refs=refs, check=check, system=system)


def classic_cg_references(refs, **figures):
    """A reference directory *refs* of one file: the classic CG solver on
    local:default with gnu-openmpi, *figures* (name: [value, lower, upper, unit])."""
    path = reference_file(refs, 'cgsolver')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    index = ['$partition', '$environ', 'variant']
    body = {'local:default': {'gnu-openmpi': {'classic': figures}}}
    with open(path, 'w') as f:
        yaml.safe_dump(
            {'CGSolverCheck': {'$index': index, **body}},
            f,
            sort_keys=False,
            default_flow_style=None,
        )
    return path


def tool(name):
    return os.path.join(BIN, name)


def reframe(
    prefix, *args, checks='reframe_checks', env=None, timeout=600, conditions=False
):
    """Run ``reframe -r`` into *prefix*; return (exit code, output, report or None).

    The run's conditions are measured but, unless *conditions*, not judged: on
    a machine shared with other work a test of something else must not turn
    DISTURBED (tests/checks/test_run_conditions.py judges them). Nor is the host
    probed then: ~0.6 s per job that no such test reads.
    """
    if not conditions:
        args = ('-S', 'judge_conditions=false', '-S', 'probe_host=false', *args)
    # Test sessions go to a database (and perflogs) of their own, not the
    # project's history.
    # Nor are they judged by the project's references (recorded at full size):
    # a test that wants references passes its own RFM_REFERENCE_PREFIX.
    no_refs = os.path.join(prefix, 'no-references')
    os.makedirs(no_refs, exist_ok=True)
    env = {
        'RFM_SQLITE_DB_FILE': os.path.join(prefix, 'results.db'),
        'CLUSTERBENCH_PERFLOGDIR': os.path.join(prefix, 'perflogs'),
        'RFM_REFERENCE_PREFIX': no_refs,
        **(env or {}),
    }
    return run_reframe(CONFIG, prefix, *args, checks=[checks], env=env, timeout=timeout)


def captured(cmd, timeout=900, env=None, cwd=PROJECT, **kwargs):
    """*cmd* run to its end from *cwd*: the completed process, its output as
    text; *env* is added to this process's environment (None: removed)."""
    # PWD as a shell sets it: plain ReFrame from a wheel keeps its history
    # in the directory the command was started in (site_configs/common.py).
    env = {'PWD': os.path.abspath(cwd), **(env or {})}
    env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    return subprocess.run(
        [str(part) for part in cmd],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=cwd,
        env=env,
        **kwargs,
    )


def clusterbench(*args, timeout=900, env=None):
    """The `clusterbench` command of this environment, from the project root."""
    return captured([tool('clusterbench'), *args], timeout=timeout, env=env)


def only_case(report):
    (run,) = report['runs']
    (case,) = run['testcases']
    return case

"""Running the real ReFrame of this environment on the project's checks."""

import os
import subprocess
import sys

from conftest import PROJECT

from clusterbench.testcluster.testing import run_reframe

BIN = os.path.dirname(sys.executable)
CONFIG = os.path.join(PROJECT, 'site_configs', 'local.py')
#: Where a check's reference file is in a reference directory, as messages
#: name it (the one place to change when the layout changes).
REFERENCE_FILE = '{refs}/{check}.yaml'


def reference_file(refs, check, system='local'):
    return REFERENCE_FILE.format(refs=refs, check=check, system=system)


def tool(name):
    return os.path.join(BIN, name)


def reframe(
    prefix, *args, checks='reframe_checks', env=None, timeout=600, conditions=False
):
    """Run ``reframe -r`` into *prefix*; return (exit code, output, report or None).

    The run's conditions are measured but, unless *conditions*, not judged: on
    a machine shared with other work a test of something else must not turn
    DISTURBED (tests/test_run_conditions.py judges them).
    """
    if not conditions:
        args = ('-S', 'judge_conditions=false', *args)
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


def clusterbench(*args, timeout=900):
    return subprocess.run(
        [tool('clusterbench'), *args],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=timeout,
    )


def only_case(report):
    (run,) = report['runs']
    (case,) = run['testcases']
    return case

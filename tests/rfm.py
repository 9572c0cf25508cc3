"""Running the real ReFrame of this environment on the project's checks."""

import json
import os
import subprocess
import sys

from conftest import PROJECT

BIN = os.path.dirname(sys.executable)
CONFIG = os.path.join(PROJECT, 'site_configs', 'local.py')


def tool(name):
    return os.path.join(BIN, name)


def reframe(prefix, *args, checks='reframe_checks', env=None, timeout=600):
    """Run ``reframe -r`` into *prefix*; return (exit code, output, report or None)."""
    report = os.path.join(prefix, 'report.json')
    # Test sessions go to a database of their own, not the project's history.
    # Nor are they judged by the project's references (recorded at full size):
    # a test that wants references passes its own RFM_REFERENCE_PREFIX.
    no_refs = os.path.join(prefix, 'no-references')
    os.makedirs(no_refs, exist_ok=True)
    env = {
        'RFM_SQLITE_DB_FILE': os.path.join(prefix, 'results.db'),
        'RFM_REFERENCE_PREFIX': no_refs,
        **(env or {}),
    }
    cmd = [
        tool('reframe'),
        '-C',
        CONFIG,
        '-c',
        os.path.join(PROJECT, checks),
        '--prefix',
        str(prefix),
        '--report-file',
        report,
        '--nocolor',
        *args,
        '-r',
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        cwd=PROJECT,
        env={**os.environ, **env},
        timeout=timeout,
    )
    data = None
    if os.path.exists(report):
        with open(report) as f:
            data = json.load(f)
    return proc.returncode, proc.stdout + proc.stderr, data


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

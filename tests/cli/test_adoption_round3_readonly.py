"""A read-only install runs the CG check (issue 41, "Blocks adoption" 4).

EasyBuild's read-only install directories, Nix or CVMFS give package data
without write permission (``chmod -R a-w``). ReFrame copies a build's
sources into the stage with their modes: the stage then refused the build's
files (``FAILED (compile)``). Here the project's own programs are staged
from such a copy, laid out as the wheel's package data is (a check file in
``reframe_checks/``, its sources in ``../src/``), by the real ReFrame run as
an unprivileged user (root writes anywhere).
"""

import json
import os
import shutil
import sysconfig
import tempfile

import adoption
import pytest
from conftest import PROJECT
from rfm import TINY_CG

REASON = adoption.unavailable()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(REASON is not None, reason=REASON or ''),
]


def read_only(path):
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.chmod(name, os.stat(name).st_mode & ~0o222)


@pytest.fixture
def base():
    path = adoption.world_readable_dir(tempfile.mkdtemp(prefix='clusterbench-ro-'))
    yield path
    for root, dirs, _ in os.walk(path):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
    shutil.rmtree(path, ignore_errors=True)


def packaged_copy(base, check, sources):
    """*check* (a file of reframe_checks/) and *sources* (directories of
    src/) copied as the wheel lays them out, then made read-only."""
    share = os.path.join(base, 'share')
    os.makedirs(os.path.join(share, 'reframe_checks'))
    shutil.copy(os.path.join(PROJECT, 'reframe_checks', check),
                os.path.join(share, 'reframe_checks'))  # fmt: skip
    for name in sources:
        shutil.copytree(
            os.path.join(PROJECT, 'src', name),
            os.path.join(share, 'src', name),
            ignore=shutil.ignore_patterns('build', '*.o'),
        )
    read_only(share)
    return share


def reframe_as_user(base, checks, *args):
    """ReFrame of the project's environment run by the unprivileged user,
    from a directory of theirs: (exit code, output, report or None)."""
    home = adoption.owned_by_user(os.path.join(base, 'home'))
    run = adoption.owned_by_user(os.path.join(base, 'run'))
    report = os.path.join(run, 'report.json')
    code = 'import sys; from reframe.frontend.cli import main; sys.exit(main())'
    proc = adoption.as_user(
        [adoption.SYSTEM_PYTHON, '-c', code,
         '-C', os.path.join(PROJECT, 'site_configs', 'local.py'), '-c', checks,
         '--prefix', run, '--report-file', report, '--nocolor',
         '-S', 'judge_conditions=false', '-S', 'probe_host=false', *args, '-r'],
        run, home,
        env={
            'PYTHONPATH': f'{PROJECT}:{sysconfig.get_path("purelib")}',
            'CLUSTERBENCH_RESULTS': os.path.join(run, 'results'),
            'CLUSTERBENCH_LOCK_DIR': run,
            'RFM_REFERENCE_PREFIX': os.path.join(run, 'no-references'),
        },
        timeout=900,
    )  # fmt: skip
    data = None
    if os.path.exists(report):
        with open(report) as f:
            data = json.load(f)
    return proc.returncode, proc.stdout + proc.stderr, data


def test_the_cg_check_runs_from_a_read_only_install(base):
    share = packaged_copy(base, 'cgsolver.py', ['cgsolver'])
    rc, out, report = reframe_as_user(
        base, os.path.join(share, 'reframe_checks', 'cgsolver.py'), *TINY_CG
    )
    assert report is not None, out[-4000:]
    cases = report['runs'][0]['testcases']
    failed = [(c['name'], c['fail_phase'], c['fail_reason']) for c in cases
              if c['result'] != 'pass']  # fmt: skip
    assert not failed, (failed, out[-4000:])
    assert rc == 0, out[-4000:]
    assert [c['name'].split()[0] for c in cases if not c['fixture']] == [
        'CGSolverCheck'
    ]

"""The one verified-output path: every check that records figures goes through it.

Each registered check of ``reframe_checks/`` is loaded by ReFrame's own
loader from the local site configuration. Most of them cannot run here for
real (no HPL or STREAM release offline, no Spack, no second node, builds as
fixtures), so their sanity function is driven directly: on a real stage
directory and a real job of the local partition, without the output file.
HPCC, OSU and IMB also run for real with programs that write nothing
(NetPIPE in tests/checks/test_netpipe_check.py).
"""

import ast
import glob
import os

import pytest
import reframe.utility.sanity as sn
from conftest import PROJECT
from reframe.core.exceptions import SanityError
from rfm import reframe

from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.verifiedoutput import EMPTY, MISSING


def registered_checks():
    """The names of the classes ``reframe_checks/`` registers (read as text)."""
    names = []
    for path in sorted(glob.glob(os.path.join(PROJECT, 'reframe_checks', '*.py'))):
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                ast.unparse(d).endswith('simple_test') for d in node.decorator_list
            ):
                names.append(node.name)
    return names


@pytest.fixture(scope='module')
def loaded(tmp_path_factory):
    """``(checks by class name, partition)`` as ReFrame loads them here."""
    prefix = tmp_path_factory.mktemp('verified')
    os.environ['RFM_PREFIX'] = str(prefix)
    try:
        import reframe.core.config as config
        from reframe.core.runtime import init_runtime, runtime
        from reframe.frontend.loader import RegressionCheckLoader

        site = config.load_config(os.path.join(PROJECT, 'site_configs', 'local.py'))
        site.select_subconfig('local')
        init_runtime(site)
        checks = RegressionCheckLoader(
            [os.path.join(PROJECT, 'reframe_checks')]
        ).load_all()
        partition = runtime().system.partitions[0]
    finally:
        del os.environ['RFM_PREFIX']
    by_name = {}
    for check in checks:
        by_name.setdefault(type(check).__name__, check)
    return by_name, partition


def staged(check, partition, stagedir):
    """*check* with a stage directory and the job it would run, not yet run."""
    from reframe.core.schedulers import Job

    check._stagedir = str(stagedir)
    check._job = Job.create(
        partition.scheduler, partition.launcher_type(), name='rfm_job', workdir=stagedir
    )
    return check


def sanity_error(check):
    with pytest.raises(SanityError) as err:
        sn.evaluate(check.verified())
    return str(err.value)


@pytest.mark.parametrize('name', registered_checks())
def test_a_missing_output_file_is_the_same_one_line_error_for_every_check(
    loaded, tmp_path, name
):
    checks, partition = loaded
    check = checks[name]
    assert isinstance(check, JudgedCheck), (
        f'{name} records figures without the verified-output path'
    )
    staged(check, partition, tmp_path)
    output = os.path.relpath(check.output_path(), tmp_path)
    message = sanity_error(check)
    assert message == MISSING.format(file=output)
    assert '\n' not in message
    assert not os.listdir(tmp_path)


def test_every_figure_check_is_covered():
    # The nine benchmark bases of issue 21, and the node battery.
    assert {
        'HPCCCheck',
        'StreamCheck',
        'HPLCheck',
        'NPBCheck',
        'CGSolverCheck',
        'HPCGCheck',
        'FabricCheck',
        'NetPIPECheck',
        'IMBPointToPointCheck',
        'OSUCollectiveCheck',
        'NodeProbeCheck',
    } <= set(registered_checks())


@pytest.mark.parametrize('name', ['HPCCCheck', 'NPBCheck', 'NodeProbeCheck'])
def test_an_empty_output_file_is_one_line(loaded, tmp_path, name):
    checks, partition = loaded
    check = staged(checks[name], partition, tmp_path)
    output = check.output_path()
    with open(output, 'w') as f:
        f.write('\n  \n')
    message = sanity_error(check)
    assert message == EMPTY.format(file=os.path.basename(output))


@pytest.mark.parametrize(
    'name, text, reason',
    [
        ('NodeProbeCheck', 'nodeprobe\nno result\n', 'rfm_job.out: '),
        ('NPBCheck', ' CG Benchmark Completed.\n', 'rfm_job.out: '),
        ('OSUCollectiveCheck', '# OSU MPI Allreduce\n1 x\n', 'rfm_job.out'),
    ],
)
def test_a_parser_error_is_one_line_naming_the_file(
    loaded, tmp_path, name, text, reason
):
    checks, partition = loaded
    check = staged(checks[name], partition, tmp_path)
    # What the run was asked for, as setup would have set it.
    check.num_tasks = 2
    with open(check.output_path(), 'w') as f:
        f.write(text)
    message = sanity_error(check)
    assert message.startswith(reason) and '\n' not in message, message


#: Real runs: HPCC writes its own file, OSU and IMB write to the job's stdout,
#: which the job always creates. The suites' releases point at a port nothing
#: listens on: the stand-ins below are the installed suites.
REAL = {
    'HPCCCheck': MISSING.format(file='hpccoutf.txt'),
    'OSUPointToPointCheck': EMPTY.format(file='rfm_job.out'),
    'IMBPointToPointCheck': EMPTY.format(file='rfm_job.out'),
}


@pytest.mark.integration
def test_runs_that_write_nothing_fail_sanity_with_the_same_lines(tmp_path):
    prefix = tmp_path / 'suites' / 'bin'
    prefix.mkdir(parents=True)
    for name in ('osu_latency', 'IMB-MPI1'):
        silent = prefix / name
        silent.write_text('#!/bin/sh\nexit 0\n')
        silent.chmod(0o755)
    rc, out, report = reframe(
        tmp_path / 'run',
        *('-p', 'gnu-openmpi', '-n', '^HPCCCheck$'),
        *('-n', 'OSUPointToPointCheck%.*placement=intra%benchmark=osu_latency'),
        *('-n', 'IMBPointToPointCheck%.*placement=intra'),
        *('-S', 'HPCCCheck.executable=true', '-S', f'osu_prefix={prefix.parent}'),
        *('-S', f'imb_prefix={prefix.parent}'),
        *('-S', 'osu_url=http://127.0.0.1:9/osu.tar.gz'),
        *('-S', 'imb_url=http://127.0.0.1:9/imb.tar.gz'),
        env={
            'CLUSTERBENCH_MIRROR': '',
            'CLUSTERBENCH_OSU_PREFIX': '',
            'CLUSTERBENCH_IMB_PREFIX': '',
        },
    )
    assert rc != 0, out
    found = {
        c['name'].split()[0]: c
        for c in report['runs'][0]['testcases']
        if not c['fixture']
    }
    assert set(found) == set(REAL), out
    for name, case in found.items():
        assert case['fail_phase'] == 'sanity', (name, case['fail_reason'])
        assert case['fail_reason'].endswith(REAL[name]), (name, case['fail_reason'])
        assert all(v[0] is None for v in case['perfvalues'].values())

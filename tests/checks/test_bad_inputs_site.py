"""The bad-input matrix, issue 29 (round 3): names that reach a job script or
a path from the cluster or a site config, and the friction items of
`clusterbench site init`, relative benchmark prefixes and the run conditions.

`clusterbench site init` reads the cluster through `scontrol`, `srun` and
`module -t avail`: here those are small scripts on PATH (and LMOD_CMD) that
print what a hostile or odd cluster would, so the real program runs as a
site admin runs it. Each case asserts the exact line, the exit code and that
nothing stored or outside `--out` changed.
"""

import json
import os
import runpy
import shutil
import stat
import subprocess
import sys

import pytest
from badinput import Store, assert_line, hashes, npb
from conftest import PROJECT
from rfm import TINY_CG, tool
from test_npb_check import (  # noqa: F401 (fixture)
    FAKE_TREE,
    _closed_port,
    fake_binaries,
    needs_openmpi,
)
from test_run_conditions import Snap

from clusterbench.checks.plugins import runconditions
from clusterbench.core import scriptnames
from clusterbench.noisyhost import conditions

pytestmark = pytest.mark.integration

#: What a ReFrame name may be, as the one validator says it.
NOT_A_NAME = scriptnames.KINDS['name'][1]
NOT_A_MODULE = scriptnames.KINDS['module'][1]

SCONTROL = """#!/bin/sh
case "$2" in
partition) cat "$FAKE_CLUSTER/partitions" ;;
node) cat "$FAKE_CLUSTER/nodes" ;;
hostnames) echo "$3" ;;
*) exit 1 ;;
esac
"""
SRUN = """#!/bin/sh
if [ "$1" = --mpi=list ]; then
    printf 'MPI plugin types are...\\n\\tnone\\n\\tpmi2\\n\\tpmix\\n'
    exit 0
fi
echo "srun: error: no node answers in this fake cluster" >&2
exit 1
"""
#: Lmod prints the listing on stderr, shell code on stdout; ReFrame asks
#: for its version.
LMOD = """#!/bin/sh
case "$1" in
--version) echo 'Modules based on Lua: Version 8.7.37' >&2 ;;
*) cat "$FAKE_CLUSTER/avail" >&2 ;;
esac
"""
NODE = (
    'NodeName=n1 CPUTot=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 '
    'RealMemory=8000 AvailableFeatures={features} Gres=(null)\n'
)
MODULES = 'gcc/13.3.0\nopenblas/0.3.30\nopenmpi/5.0.8-gcc-13.3.0\n'


def fake_cluster(tmp_path, partition='compute', modules=MODULES, features='ib'):
    """A directory of scontrol, srun and Lmod stand-ins printing a cluster of
    one partition *partition* with node n1; the environment to run with it."""
    fake = tmp_path / 'fake'
    (fake / 'bin').mkdir(parents=True)
    for name, text in (('scontrol', SCONTROL), ('srun', SRUN), ('lmod', LMOD)):
        path = fake / 'bin' / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (fake / 'partitions').write_text(f'PartitionName={partition} Nodes=n1\n')
    (fake / 'nodes').write_text(NODE.format(features=features))
    (fake / 'avail').write_text(modules)
    return {
        'FAKE_CLUSTER': str(fake),
        'PATH': f'{fake / "bin"}:{os.environ["PATH"]}',
        'LMOD_CMD': str(fake / 'bin' / 'lmod'),
        'MODULES_CMD': '',
    }


def site_init(tmp_path, env, *args):
    return subprocess.run(
        [tool('clusterbench'), 'site', 'init', '--system', 'newsite',
         '--out', str(tmp_path / 'out'), '--no-check', *args],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, **env},
    )  # fmt: skip


def tree(path):
    """Every file and directory under *path*, with the content of each file."""
    return sorted(p.relative_to(path) for p in path.rglob('*')), hashes(path)


# --- 16. a name that would run as a command in a job script -----------------


def test_16_site_init_refuses_a_module_name_that_is_a_command(tmp_path):
    hostile = f'openmpi/4.1;touch {tmp_path}/X'
    env = fake_cluster(tmp_path, modules=f'gcc/13.3.0\nopenblas/0.3.30\n{hostile}\n')
    before = tree(tmp_path)
    proc = site_init(tmp_path, env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_line(
        proc.stderr,
        f'clusterbench: error: module -t avail: {hostile!r}: {NOT_A_MODULE}',
    )
    assert proc.stderr.count('\n') == 1
    # Nothing written, nothing run: no config, no skeleton, no X.
    assert tree(tmp_path) == before


HAND_CONFIG = """
import runpy

common = runpy.run_path({common!r})

site_configuration = {{
    'systems': [
        {{
            'name': 'hand',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {{
                    'name': 'default',
                    'scheduler': 'local',
                    'launcher': 'mpirun',
                    'access': {access!r},
                    'environs': ['gnu-openmpi'],
                }}
            ],
        }}
    ],
    'environments': [
        {environ},
    ],
}}
"""
#: A hand-edited environment through common.py's builder, and written out.
BUILT = "common['module_environment']('gnu-openmpi', 'openmpi', {modules!r})"
WRITTEN = (
    "{{'name': 'gnu-openmpi', 'modules': {modules!r}, 'cc': 'mpicc', "
    "'features': ['mpi', 'openmpi']}}"
)


def hand_config(tmp_path, environ, access=(), modules=()):
    path = tmp_path / 'hand.py'
    path.write_text(
        HAND_CONFIG.format(
            common=os.path.join(PROJECT, 'site_configs', 'common.py'),
            access=list(access),
            environ=environ.format(modules=list(modules)),
        )
    )
    return path


#: The line of HAND_CONFIG that calls the environment's builder.
ENVIRON_LINE = HAND_CONFIG.splitlines().index('        {environ},') + 1


def test_16_hand_edited_module_through_common_py(tmp_path):
    hostile = f'openmpi/4.1;touch {tmp_path}/X'
    config = hand_config(tmp_path, BUILT, modules=['gcc/13', hostile])
    what = f"environment 'gnu-openmpi': modules: {hostile!r}: {NOT_A_MODULE}"
    store = Store(tmp_path)
    rc, out = store.run(*TINY_CG, options=('--config', str(config), '--system', 'hand'))
    assert rc == 2, out
    assert_line(out, f'clusterbench: error: {config}:{ENVIRON_LINE}: {what}')
    store.assert_kept()
    assert not (store.results / 'hand').exists()
    # Plain ReFrame refuses to load it, in one line too.
    plain = subprocess.run(
        [tool('reframe'), '-C', str(config), '--show-config', '--nocolor'],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert plain.returncode == 1
    assert_line(
        plain.stdout + plain.stderr,
        f'ERROR: failed to load configuration: {config}:{ENVIRON_LINE}: {what}',
    )


@pytest.mark.parametrize(
    'field', ['modules', 'access'], ids=['module', 'access-option']
)
def test_16_hand_edited_config_without_common_py(tmp_path, field):
    # A site config may write its entries out instead of calling common.py:
    # `clusterbench run` checks every name of the configuration it loads.
    if field == 'modules':
        hostile = 'openmpi/4.1;touch X'
        config = hand_config(tmp_path, WRITTEN, modules=[hostile])
        what = f"environment 'gnu-openmpi': modules: {hostile!r}: {NOT_A_MODULE}"
    else:
        hostile = '--partition=default\ntouch X'
        config = hand_config(tmp_path, WRITTEN, access=[hostile])
        why = scriptnames.KINDS['directive'][1]
        what = f"system 'hand' partition 'default': access: {hostile!r}: {why}"
    store = Store(tmp_path)
    rc, out = store.run(*TINY_CG, options=('--config', str(config), '--system', 'hand'))
    assert rc == 2, out
    assert_line(out, f'clusterbench: error: {config}: {what}')
    store.assert_kept()
    assert not (store.results / 'hand').exists()


@pytest.mark.parametrize('name', ['local', 'box', 'example-site'])
def test_16_the_shipped_site_configs_pass_the_one_validator(name):
    config = runpy.run_path(os.path.join(PROJECT, 'site_configs', f'{name}.py'))
    assert scriptnames.config_problem(config['site_configuration']) is None
    # What a scheduler option may be, and what a module name may not.
    assert scriptnames.problem('directive', '--constraint=ib&gpu') is None
    assert scriptnames.problem('module', 'openmpi/5.0.8-gcc-13.3.0') is None
    assert scriptnames.problem('module', 'openmpi/4.1 x') == NOT_A_MODULE


# --- 17. a name that would write outside --out -------------------------------


def test_17_site_init_refuses_a_partition_that_climbs_out(tmp_path):
    # The issue's `../../../../../../../tmp/P`, aimed at tmp_path/outside.
    climbing = '../../../outside/P'
    env = fake_cluster(tmp_path, partition=climbing)
    before = tree(tmp_path)
    proc = site_init(tmp_path, env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_line(
        proc.stderr,
        f'clusterbench: error: scontrol show partition: {climbing!r}: {NOT_A_NAME}',
    )
    assert proc.stderr.count('\n') == 1
    # Refused before anything was written, inside --out or outside.
    assert tree(tmp_path) == before
    assert not (tmp_path / 'out').exists() and not (tmp_path / 'outside').exists()


def test_16_site_init_leaves_out_what_reframe_would_refuse(tmp_path):
    """Odd but not hostile: a Slurm feature with a dash is a TODO, two Open MPI
    versions give environment names ReFrame accepts; the config loads."""
    modules = MODULES + 'openmpi/4.1.6-gcc-13.3.0\n'
    env = fake_cluster(tmp_path, modules=modules, features='ib,ib-hdr')
    proc = site_init(tmp_path, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = tmp_path / 'out' / 'site_configs' / 'newsite.py'
    text = config.read_text()
    assert "# TODO: Slurm feature 'ib-hdr' left out: not a ReFrame feature" in text
    assert "'gnu-openmpi-5_0_8'" in text
    shown = subprocess.run(
        [tool('reframe'), '-C', str(config), '--system', 'newsite',
         '--show-config', '--nocolor'],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, **env},
    )  # fmt: skip
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "'ib-hdr'" not in shown.stdout and '"ib"' in shown.stdout


# --- friction: a relative benchmark path -------------------------------------


def run_from(cwd, store, *reframe_args):
    """`clusterbench run` on local, started in *cwd* (not the project root)."""
    tmp = store.tmp
    return subprocess.run(
        [tool('clusterbench'), 'run',
         '--config', os.path.join(PROJECT, 'site_configs', 'local.py'),
         '--checks', os.path.join(PROJECT, 'reframe_checks', 'npb.py'),
         '--results', str(store.results), '--references', str(store.refs),
         '--', *reframe_args],
        capture_output=True, text=True, cwd=cwd, timeout=600,
        env={
            **os.environ,
            'CLUSTERBENCH_CACHE': str(tmp / 'cache'),
            'CLUSTERBENCH_MIRROR': '',
            'CLUSTERBENCH_PERFLOGDIR': str(tmp / 'perflogs'),
            'CLUSTERBENCH_LOCK_DIR': str(tmp / 'locks'),
            'RFM_SQLITE_DB_FILE': str(tmp / 'results.db'),
        },
    )  # fmt: skip


@needs_openmpi
@pytest.mark.parametrize('variable', ['npb_prefix', 'npb_source'])
def test_friction_relative_npb_path_is_from_the_launch_directory(
    tmp_path,
    fake_binaries,  # noqa: F811 (the fixture)
    variable,
):
    # Before: setup found `npb` from the launch directory, the build's `ls`
    # looked for it in the stage: FAILED (compile_wait), the cause in
    # rfm_build.err only. (npb_source was already made absolute.)
    store = Store(tmp_path)
    work = tmp_path / 'work'
    if variable == 'npb_prefix':
        shutil.copytree(fake_binaries, work / 'npb' / 'bin')
        settings = ('-S', f'npb_url=http://127.0.0.1:{_closed_port()}/npb.tar.gz',
                    '-S', 'npb_prefix=npb', '-S', 'npb_class=S',
                    '-n', 'benchmark=cg$', '-p', 'gnu-openmpi')  # fmt: skip
    else:
        shutil.copytree(FAKE_TREE, work / 'npb')
        settings = npb(tree='npb')
    (tmp_path / 'locks').mkdir()
    proc = run_from(work, store, *settings)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert_line(out, '{ANY}, 0 FAILED')
    (report,) = {*(store.results / 'local').glob('*/report.json')} - {
        store.earlier / 'report.json'
    }
    (cg,) = [
        c
        for r in json.loads(report.read_text())['runs']
        for c in r['testcases']
        if c['name'].startswith('NPBCheck')
    ]
    assert cg['result'] == 'pass', cg['fail_reason']
    if variable == 'npb_prefix':
        assert cg['executable'] == str(work / 'npb' / 'bin' / 'cg.S.x')
    store.assert_kept(new_session=True)


# --- friction: the ranks' CPU share of a threaded rank ------------------------


def test_friction_ranks_share_of_a_threaded_rank_is_of_its_cpus():
    # The STREAM: one rank, two OpenMP threads on a 2-CPU VM, quiet:
    # 18.8 CPU-s in 10 s was shown as `ranks 188 %`.
    quiet = conditions.measure(Snap(0, 0, 0, 0), Snap(10.0, 0, 19.0, 1.0), 1, 18.8, 2)
    assert quiet['ranks_cpu_share'] == pytest.approx(0.94)
    assert ', ranks 94 %, ' in conditions.format_line(quiet)
    # A real StreamCheck run here (1 rank x 2 threads, 2 CPUs) beside the
    # other helpers' work: 16.929 CPU-s in 47.273 s is 18 % of its 2 CPUs,
    # not 36 % of one.
    busy = conditions.measure(
        Snap(0, 0, 0, 0), Snap(47.273, 0.13, 94.4, 0.0), 1, 16.929, 2
    )
    assert conditions.disturbed(busy).startswith("ranks' CPU share 18 %")
    # The launcher's own CPU time is counted too: never above 100 %.
    over = conditions.measure(Snap(0, 0, 0, 0), Snap(10.0, 0, 20.0, 0), 1, 20.3, 2)
    assert over['ranks_cpu_share'] == 1.0 and over['ranks_cpu_s'] == 20.3


def test_friction_the_wrapper_is_told_each_rank_s_cpus(tmp_path):
    out = tmp_path / 'c.json'
    proc = subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.conditions', 'wrap', '-o',
         str(out), '--ranks', '1', '--cpus-per-rank', '2', '--local',
         '--no-probe', '--', sys.executable, '-c', 'pass'],
        env={**os.environ, 'PYTHONPATH': PROJECT},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = json.loads(out.read_text())
    assert found['cpus_per_rank'] == 2 and 0 <= found['ranks_cpu_share'] <= 1
    options = runconditions.wrapper_options('c.json', 1, True, cpus_per_rank=2)
    assert options[options.index('--cpus-per-rank') + 1] == '2'

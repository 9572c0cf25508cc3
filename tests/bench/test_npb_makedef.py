"""config/make.def generation and source-tree handling (clusterbench.bench.npb_makedef).

tests/data/fake_npb is a STAND-IN for an NPB tree (our own code, see its
README): it has NPB's build interface, not NPB's benchmarks.
"""

import os
import shutil
import subprocess

import pytest
from conftest import PROJECT

from clusterbench.bench import npb_makedef as md
from clusterbench.parsers import npb

FAKE_TREE = os.path.join(PROJECT, 'tests', 'data', 'fake_npb')
REAL_TREE = os.environ.get('CLUSTERBENCH_NPB_SOURCE')
OPENMPI_FC = shutil.which('mpif90.openmpi')
OPENMPI_ENV = {
    'OMPI_ALLOW_RUN_AS_ROOT': '1',
    'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
    'OMPI_MCA_rmaps_base_oversubscribe': '1',
}


def copy_tree(tmp_path, npb33=False):
    tree = tmp_path / 'tree'
    shutil.copytree(FAKE_TREE, tree)
    if npb33:
        common = tree / 'sys' / 'make.common'
        common.write_text(
            common.read_text()
            .replace('$(CLASS).x', '$(CLASS).$(NPROCS)')
            .replace('$(MPIFC)', '$(MPIF77)')
            .replace('COMPILED_NPROCS = 0', 'COMPILED_NPROCS = $(NPROCS)')
        )
    return tree


def test_fake_tree_reads_as_npb_34():
    tree = md.inspect_tree(FAKE_TREE)
    assert tree.version == '3.4'
    assert tree.fortran_variable == 'MPIFC'
    assert not tree.nprocs_at_compile_time and not tree.legacy_boz
    assert tree.executable('bt', 'C', 4) == 'bt.C.x'
    assert tree.make_command('bt', 'C', 4) == ['make', 'bt', 'CLASS=C']


def test_33_tree_compiles_the_process_count_in(tmp_path):
    tree = md.inspect_tree(str(copy_tree(tmp_path, npb33=True)))
    assert tree.version == '3.3' and tree.fortran_variable == 'MPIF77'
    assert tree.executable('bt', 'C', 4) == 'bt.C.4'
    assert tree.make_command('bt', 'C', 4) == ['make', 'bt', 'CLASS=C', 'NPROCS=4']
    assert 'MPIF77 = mpif90\nFLINK = $(MPIF77)\n' in md.makedef(tree, 'mpif90', 'mpicc')


@pytest.mark.parametrize(
    'setup, message',
    [
        (lambda p: None, 'NPB source tree not found'),
        (lambda p: p.mkdir(), 'not an NPB 3.x MPI source tree (no sys/make.common)'),
    ],
)
def test_not_a_tree_is_one_line_naming_the_path(tmp_path, setup, message):
    path = tmp_path / 'NPB3.4-MPI'
    setup(path)
    with pytest.raises(md.NPBSourceError) as err:
        md.inspect_tree(str(path))
    assert str(err.value).startswith(f'{path}: {message}')
    assert '\n' not in str(err.value)


def fake_compiler(tmp_path, first_line):
    path = tmp_path / 'fc'
    path.write_text(f'#!/bin/sh\necho "{first_line}"\n')
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    'line, major',
    [
        ('GNU Fortran (Debian 12.2.0-14+deb12u1) 12.2.0', 12),
        ('GNU Fortran (GCC) 9.4.0', 9),
        ('GNU Fortran (Ubuntu 10.5.0-1ubuntu1~22.04) 10.5.0', 10),
        ('ifort (IFORT) 2021.10.0 20230609', None),
        ('flang-new version 17.0.6', None),
    ],
)
def test_gfortran_version_behind_a_wrapper(tmp_path, line, major):
    assert md.gfortran_major(fake_compiler(tmp_path, line)) == major


def test_missing_compiler_is_named():
    with pytest.raises(md.NPBSourceError, match='^mpif90.nowhere: Fortran compiler'):
        md.gfortran_major('mpif90.nowhere')


def test_fortran_flags_for_npbs_mpi_calls():
    assert md.fortran_flags('-O3', 12) == '-O3 -fallow-argument-mismatch'
    assert md.fortran_flags('-O3', 9) == '-O3'
    assert md.fortran_flags('-O3 -march=native', None) == '-O3 -march=native'
    assert md.fortran_flags('-O3', 12, legacy_boz=True) == (
        '-O3 -fallow-argument-mismatch -fallow-invalid-boz'
    )
    assert md.fortran_flags('-O2', 11, large_static_data=True) == (
        '-O2 -fallow-argument-mismatch -mcmodel=medium'
    )
    assert md.fortran_flags('-O3 -fallow-argument-mismatch', 12) == (
        '-O3 -fallow-argument-mismatch'
    )


def test_makedef_values_as_make_reads_them(tmp_path):
    tree = md.inspect_tree(FAKE_TREE)
    text = md.makedef(
        tree, 'mpif90.openmpi', 'mpicc.openmpi', fflags='-O3 -fallow-argument-mismatch'
    )
    (tmp_path / 'make.def').write_text(text)
    (tmp_path / 'Makefile').write_text(
        'include make.def\nshow:\n'
        '\t@echo "$(MPIFC)|$(FLINK)|$(FFLAGS)|$(MPICC)|$(CLINK)|$(CFLAGS)|'
        '$(BINDIR)|$(RAND)|$(CC)"\n'
    )
    out = subprocess.run(
        ['make', '-s', 'show'], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().split('|') == [
        'mpif90.openmpi', 'mpif90.openmpi', '-O3 -fallow-argument-mismatch',
        'mpicc.openmpi', 'mpicc.openmpi', '-O3', '../bin', 'randi8', 'cc',
    ]  # fmt: skip


def test_flags_with_shell_and_make_syntax_reach_the_compiler_as_given(tmp_path):
    tree = md.inspect_tree(FAKE_TREE)
    hostile = '-O2 -DX=a;touch pwned1 $(shell touch pwned2) `touch pwned3` $$HOME'
    text = md.makedef(tree, 'mpif90.openmpi', 'mpicc.openmpi', fflags=hostile)
    (tmp_path / 'make.def').write_text(text)
    # A recipe runs the flags as the compile line would: one word a line.
    (tmp_path / 'Makefile').write_text(
        "include make.def\nshow:\n\t@printf '%s\\n' $(FFLAGS)\n"
    )
    out = subprocess.run(
        ['make', '-s', 'show'], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == hostile.split()
    assert not [p for p in os.listdir(tmp_path) if p.startswith('pwned')]


def _build(tree, fflags, bench='cg', cls='S', nprocs=2):
    info = md.inspect_tree(str(tree))
    text = md.makedef(info, 'mpif90.openmpi', 'mpicc.openmpi', fflags=fflags)
    (tree / 'make.def.test').write_text(text)
    script = ' && '.join(md.build_commands(info, bench, cls, nprocs, 'make.def.test'))
    proc = subprocess.run(
        ['sh', '-c', script], cwd=tree, capture_output=True, text=True, timeout=300
    )
    return proc, tree / 'bin' / info.executable(bench, cls, nprocs)


@pytest.mark.skipif(not OPENMPI_FC, reason='Open MPI compilers not installed')
def test_fake_tree_builds_and_runs_with_the_generated_makedef(tmp_path):
    tree = copy_tree(tmp_path)
    # Stale products in the copied tree are removed first.
    (tree / 'bin').mkdir()
    (tree / 'bin' / 'cg.S.x').write_text('stale')
    flags = md.fortran_flags('-O3', md.gfortran_major('mpif90.openmpi'))
    proc, exe = _build(tree, flags)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f'mpif90.openmpi -c {flags} probe.f' in proc.stdout
    run = subprocess.run(
        ['mpirun.openmpi', '-np', '2', str(exe)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **OPENMPI_ENV},
    )
    result = npb.verify(run.stdout, 'fake cg.S.x', 'cg', 'S', 2)
    assert result['total_processes'] == 2
    assert f'FFLAGS       = {flags}' in run.stdout


@pytest.mark.skipif(not OPENMPI_FC, reason='Open MPI compilers not installed')
def test_without_the_mismatch_flag_gfortran_refuses_npbs_calls(tmp_path):
    if (md.gfortran_major('mpif90.openmpi') or 0) < 10:
        pytest.skip('gfortran < 10 accepts mismatched arguments')
    proc, exe = _build(copy_tree(tmp_path), '-O3')
    assert proc.returncode != 0
    assert 'Type mismatch' in proc.stderr
    assert not exe.exists()


@pytest.mark.skipif(not OPENMPI_FC, reason='Open MPI compilers not installed')
def test_33_build_names_the_executable_by_process_count(tmp_path):
    proc, exe = _build(copy_tree(tmp_path, npb33=True), '-O3 -fallow-argument-mismatch',
                       bench='is', nprocs=2)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert exe.name == 'is.S.2' and exe.exists()
    assert 'BENCHMARK=is CLASS=S NPROCS=2' in proc.stdout


@pytest.mark.skipif(not REAL_TREE, reason='CLUSTERBENCH_NPB_SOURCE not set')
def test_real_tree_is_recognised():
    tree = md.inspect_tree(REAL_TREE)
    assert tree.version.startswith('3.')
    assert tree.executable('cg', 'A', 2) in ('cg.A.x', 'cg.A.2')
    text = md.makedef(tree, 'mpif90', 'mpicc')
    assert f'{tree.fortran_variable} = mpif90' in text

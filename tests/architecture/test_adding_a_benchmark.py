"""ARCHITECTURE.md's "how to add a benchmark" list is true: a benchmark is
named only in its own files, and what the harness knows of its figures comes
from their declarations, not from lists elsewhere that name it."""

import pathlib
import re
import subprocess

import pytest

from clusterbench.core.figures import (
    HIGHER,
    LOWER,
    SOLVER,
    Catalog,
    DeclarationError,
    Figure,
)
from clusterbench.parsers import catalog
from clusterbench.references import floors
from clusterbench.report.identity import application_family

PROJECT = pathlib.Path(__file__).resolve().parents[2]

#: The places ARCHITECTURE.md's list names, for a benchmark called NAME.
OWN_FILES = (
    r'clusterbench/parsers/{name}\.py',
    r'clusterbench/checks/{name}\.py',
    r'reframe_checks/{name}\.py',
    r'spack_envs/common/benchmarks\.yaml',
    r'reference_data/[^/]+/{name}\.yaml',
)
#: Not code a benchmark must touch: tests, prose, the measuring scripts,
#: Spack's generated locks and the provenance that references record.
NOT_CODE = re.compile(
    r'^(tests/|docs/|evaluation/|.*\.md$|.*spack\.lock$|reference_data/.*/provenance/)'
)


def files_naming(name):
    tracked = subprocess.run(
        ['git', 'ls-files'], cwd=PROJECT, capture_output=True, text=True, check=True
    ).stdout.split()
    word = re.compile(name, re.I)
    found = []
    for path in tracked:
        if NOT_CODE.match(path):
            continue
        try:
            text = (PROJECT / path).read_text()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        if word.search(text):
            found.append(path)
    return found


def test_the_latest_benchmark_is_named_only_in_the_files_the_list_names():
    """HPCG came as a parser, a base, a leaf and its Spack root; nothing else
    in the code may know its name (its headline and kind are declared)."""
    own = [re.compile(p.format(name='hpcg')) for p in OWN_FILES]
    found = files_naming('hpcg')
    assert 'clusterbench/parsers/hpcg.py' in found  # the search does find it
    elsewhere = [p for p in found if not any(o.fullmatch(p) for o in own)]
    assert elsewhere == []
    assert len(found) <= 4


def test_the_list_in_architecture_counts_at_most_four_files():
    text = (PROJECT / 'ARCHITECTURE.md').read_text()
    count = re.search(r'\*\*A benchmark\*\* \((\d) files outside tests', text)
    assert count and int(count.group(1)) <= 4


def test_every_parser_that_declares_figures_is_in_the_catalog_without_a_list():
    source = (PROJECT / 'clusterbench/parsers/catalog.py').read_text()
    declaring = sorted(
        path.stem
        for path in (PROJECT / 'clusterbench/parsers').glob('*.py')
        if re.search(r'^DECLARED\s*=', path.read_text(), re.M)
    )
    assert [m.__name__.rsplit('.', 1)[1] for m in catalog.MODULES] == declaring
    assert not any(f'import {name}' in source for name in declaring)


def test_a_figure_declared_twice_must_be_declared_alike():
    plain = Figure('time', 's', LOWER)
    Catalog((plain,), (Figure('time', 's', LOWER),))  # the same declaration
    with pytest.raises(DeclarationError, match='declared twice, differently'):
        Catalog((plain,), (Figure('time', 's', LOWER, kind=SOLVER),))


@pytest.mark.parametrize(
    'variable, unit, family',
    [
        ('mops_total', 'Mop/s', 'NPB'),
        ('mops_per_process', 'Mop/s', None),
        ('gflops', 'GFlop/s', 'CG solver'),
        ('hpl', 'GFlop/s', 'HPL'),
        ('stream_triad', 'GB/s', 'STREAM'),
        ('stream_star_triad', 'GB/s', 'STREAM'),
        ('stream_copy', 'GB/s', None),
        ('hpcg', 'GFlop/s', 'HPCG'),
        ('time', 's', None),
    ],
)
def test_the_report_s_application_family_is_the_declared_headline(
    variable, unit, family
):
    assert application_family(variable, unit) == family
    assert catalog.CATALOG.headlines() == ('CG solver', 'HPCG', 'HPL', 'NPB', 'STREAM')


@pytest.mark.parametrize(
    'test, variable, unit, kind',
    [
        ('HPCGCheck', 'hpcg', 'GFlop/s', 'solver, all ranks'),
        ('AnyName', 'mops_total', 'Mop/s', 'solver, all ranks'),
        ('AnyName', 'bandwidth', 'GB/s', 'solver, all ranks'),
        ('FabricCheck', 'bandwidth', 'MB/s', 'MPI bandwidth'),
        ('CGSolverCheck', 'mpi_share', '%', 'share'),
    ],
)
def test_the_floor_kind_of_a_solver_figure_is_declared_not_guessed_from_its_test(
    test, variable, unit, kind
):
    assert floors.kind_of(test, variable, unit, {'num_tasks': '4'}) == kind


def test_a_new_higher_is_better_figure_needs_only_its_declaration():
    new = Figure('new_rate', 'GFlop/s', HIGHER, headline='New', kind=SOLVER)
    found = Catalog(catalog.CATALOG.figures, (new,))
    assert found.declared('new_rate', 'GFlop/s') is new
    assert found.headline('new_rate', 'GFlop/s') == 'New'
    assert found.kind('new_rate', 'GFlop/s') == SOLVER


# -- a new benchmark provisioned as data: a prefix plus a release -----------

TINY_CHECK = """\
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, sanity_function

from clusterbench.bench.source import Source
from clusterbench.bench.sources import Release
from clusterbench.checks.plugins.spack import MPI_FLAVOURS
from clusterbench.checks.provisioning import Provisioned, build_fixture

TINY = Source(
    'tiny',
    'Tiny benchmark',
    release=Release('tiny', '1.0', {url!r}, {sha256!r}),
    prefix=True,
    build=('{{cc}} -o tiny tiny.c',),
    label='Tiny',
)


@rfm.simple_test
class TinyCheck(Provisioned, rfm.RegressionTest):
    valid_systems = ['*']
    source = TINY
    tiny_build = build_fixture(TINY)
    mpi = parameter(MPI_FLAVOURS)
    spack_executable = 'tiny'

    @sanity_function
    def ran(self):
        return sn.assert_found('tiny ran', self.stdout)
"""
TINY_C = '#include <stdio.h>\nint main(void) { puts("tiny ran"); return 0; }\n'


def _tiny(tmp_path):
    """A release of the tiny benchmark (file://) and its check beside it."""
    import tarfile

    from clusterbench.bench import sources

    tree = tmp_path / 'tiny-1.0'
    tree.mkdir()
    (tree / 'tiny.c').write_text(TINY_C)
    tarball = tmp_path / 'tiny-1.0.tar.gz'
    with tarfile.open(tarball, 'w:gz') as tar:
        tar.add(tree, arcname='tiny-1.0')
    checks = tmp_path / 'checks'
    checks.mkdir()
    text = TINY_CHECK.format(
        url=f'file://{tarball}', sha256=sources.sha256_of(str(tarball))
    )
    (checks / 'tiny.py').write_text(text)
    return checks


def test_a_new_benchmark_provisioned_by_a_prefix_or_its_release(tmp_path):
    """One Source description (a prefix, else the release built with the
    environment's compiler) and one check file: ReFrame lists the check and
    its fixtures, builds the release, and a prefix given wins over it."""
    from rfm import reframe, tool

    checks = _tiny(tmp_path)
    env = {'CLUSTERBENCH_CACHE': str(tmp_path / 'cache'), 'CLUSTERBENCH_MIRROR': ''}
    listed = subprocess.run(
        [tool('reframe'), '-C', str(PROJECT / 'site_configs/local.py')]
        + ['-c', str(checks), '-l', '-p', 'gnu-openmpi'],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__('os').environ, **env},
    )
    assert 'TinyCheck' in listed.stdout, listed.stdout + listed.stderr
    assert 'TinyBuild' in listed.stdout and 'TinyRelease' in listed.stdout

    rc, out, report = reframe(
        tmp_path / 'release', '-p', 'gnu-openmpi', checks=str(checks), env=env
    )
    assert rc == 0, out
    cases = report['runs'][0]['testcases']
    (tiny,) = [c for c in cases if c['name'].startswith('TinyCheck')]
    assert tiny['result'] == 'pass', tiny
    assert tiny['build_provider'].startswith(f'release file://{tmp_path}'), tiny

    prefix = tmp_path / 'installed' / 'bin'
    prefix.mkdir(parents=True)
    (prefix / 'tiny').write_text('#!/bin/sh\necho tiny ran\n')
    (prefix / 'tiny').chmod(0o755)
    rc, out, report = reframe(
        tmp_path / 'prefix',
        '-p',
        'gnu-openmpi',
        '-S',
        f'tiny_prefix={prefix.parent}',
        checks=str(checks),
        env=env,
    )
    assert rc == 0, out
    cases = report['runs'][0]['testcases']
    (tiny,) = [c for c in cases if c['name'].startswith('TinyCheck')]
    assert tiny['result'] == 'pass', tiny
    assert tiny['build_provider'] == 'offline', tiny
    (build,) = [c for c in cases if c['name'].startswith('TinyBuild')]
    assert build['reason'] == f'tiny_prefix={prefix.parent} given', build

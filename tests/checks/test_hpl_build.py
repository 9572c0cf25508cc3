"""HPL built by the check itself: Make.<arch> from the environment, a real build.

HPL is not shipped; with ``CLUSTERBENCH_HPL_SOURCE`` pointing at an unpacked
HPL 2.3 tree (netlib's tarball, or github.com/icl-utk-edu/hpl at 2.3) the
check builds and runs it for real at a tiny N, once from a release tarball
made of that tree and served by a loopback HTTP server, once from the tree
itself. Skipped cleanly without it.
"""

import os

import pytest
from conftest import PROJECT
from loopback import serving, tarball_of
from rfm import reframe

from clusterbench.bench import hpl_makearch, sources
from clusterbench.core.errors import ClusterbenchError

HPL_SOURCE = os.environ.get('CLUSTERBENCH_HPL_SOURCE')
needs_hpl = pytest.mark.skipif(
    not HPL_SOURCE or not os.path.isfile(os.path.join(HPL_SOURCE or '', 'Make.top')),
    reason='set CLUSTERBENCH_HPL_SOURCE to an unpacked HPL 2.3 tree',
)
CHECKS = os.path.join(PROJECT, 'reframe_checks', 'hpl.py')


def test_make_arch_comes_from_the_environment():
    text = hpl_makearch.make_arch(
        'mpicc.mpich', '-O3 -march=native', '-lopenblas', origin='environment x'
    )
    lines = dict(
        (k.strip(), v.strip())
        for k, _, v in (line.partition('=') for line in text.splitlines())
        if not k.startswith('#')
    )
    assert lines['CC'] == lines['LINKER'] == 'mpicc.mpich'
    assert lines['CCFLAGS'] == '$(HPL_DEFS) -O3 -march=native'
    assert lines['LAlib'] == '-lopenblas'
    assert lines['HPL_OPTS'] == '-DHPL_CALL_CBLAS'
    assert lines['ARCH'] == hpl_makearch.ARCH
    # TOPdir comes from make's command line, so the file fits any stage.
    assert 'TOPdir' not in lines
    with pytest.raises(ClusterbenchError, match='environment y: no C compiler'):
        hpl_makearch.make_arch('', '-O3', '-lopenblas', origin='environment y')


def test_blas_and_native_flags():
    assert hpl_makearch.blas_libs({'blas': 'openblas'}) == '-lopenblas'
    assert hpl_makearch.blas_libs({'blas': 'mkl'}) == '-lmkl_rt'
    assert hpl_makearch.blas_libs({'blas': 'blis'}) == '-lblis'
    assert hpl_makearch.blas_libs({'blas': 'acml', 'blas_libs': '-lacml'}) == '-lacml'
    with pytest.raises(ClusterbenchError, match="BLAS 'acml': declare its link"):
        hpl_makearch.blas_libs({'blas': 'acml'})
    assert hpl_makearch.cflags('-O3', 'gcc', True) == '-O3 -march=native'
    assert hpl_makearch.cflags('-O3', 'gcc', False) == '-O3'
    assert hpl_makearch.cflags('-O3', 'unknown', True) == '-O3'


def _only_check(report):
    (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    return case


def _make_file(case):
    with open(os.path.join(case['outputdir'], 'Make.clusterbench')) as f:
        return f.read()


@pytest.mark.integration
@needs_hpl
def test_hpl_builds_from_its_release_and_passes_its_residual_check(tmp_path):
    served = tmp_path / 'served'
    with serving(served) as server:
        tarball = tarball_of(HPL_SOURCE, served / 'hpl-2.3.tar.gz', 'hpl-2.3')
        rc, out, report = reframe(
            tmp_path / 's',
            '-S', f'hpl_url={server.url("hpl-2.3.tar.gz")}',
            '-S', f'hpl_sha256={sources.sha256_of(tarball)}',
            '-S', 'hpl_n=1000', '-S', 'hpl_nb=64', '-p', 'gnu-openmpi',
            checks=CHECKS,
            env={'CLUSTERBENCH_CACHE': str(tmp_path / 'cache'),
                 'CLUSTERBENCH_MIRROR': ''},
        )  # fmt: skip
    assert report is not None and rc == 0, out
    case = _only_check(report)
    assert case['result'] == 'pass', case['fail_reason']
    assert case['build_provider'].startswith('release http://127.0.0.1:')
    # The partition is this host: its own instruction set.
    assert case['build_cflags'] == '-O3 -march=native'
    assert 'CC           = mpicc.openmpi\n' in _make_file(case)
    assert case['hpl_problem'] == {'n': 1000, 'nb': 64, 'p': 1, 'q': 2}
    hpl = {k.rsplit(':', 1)[1]: v for k, v in case['perfvalues'].items()}['hpl']
    assert hpl[0] > 0 and hpl[4] == 'GFlop/s'
    with open(os.path.join(case['outputdir'], 'rfm_job.out')) as f:
        assert '...... PASSED' in f.read()


@pytest.mark.integration
@needs_hpl
def test_hpl_from_a_tree_with_the_portable_target(tmp_path):
    rc, out, report = reframe(
        tmp_path,
        '-S', f'hpl_source={HPL_SOURCE}', '-S', 'hpl_native=no',
        '-S', 'hpl_n=800', '-S', 'hpl_nb=64', '-p', 'gnu-mpich',
        checks=CHECKS,
    )  # fmt: skip
    assert report is not None and rc == 0, out
    case = _only_check(report)
    assert case['result'] == 'pass', case['fail_reason']
    assert case['build_provider'] == f'source {os.path.abspath(HPL_SOURCE)}'
    assert case['build_cflags'] == '-O3'
    assert 'CC           = mpicc.mpich\n' in _make_file(case)

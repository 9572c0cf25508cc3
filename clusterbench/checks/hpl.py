"""HPL (``xhpl``), built by the check itself or by Spack.

Offline (the default) the check builds HPL 2.3 from its release
(``hpl_url``/``hpl_sha256``, fetched and verified once per session, see
:mod:`clusterbench.checks.release`), or from an unpacked tree given with
``-S hpl_source=DIR``, against the environment's MPI (its C compiler
wrapper) and BLAS (``extras.blas``: OpenBLAS, BLIS, MKL; ``extras.blas_libs``
for others), through a ``Make.<arch>`` written from the environment (see
:mod:`clusterbench.bench.hpl_makearch`). With ``-S build_mode=spack`` Spack builds
it from the partition's environment instead. When no release can be had
the check is not generated and the session says once why: the default suite
then has HPL from HPCC only.
"""

import functools
import os

import reframe as rfm
from reframe.core.builtins import (
    fixture,
    parameter,
    run_after,
    run_before,
    variable,
)
from reframe.core.exceptions import ReframeError
from reframe.utility.cpuinfo import cpuinfo

from clusterbench.bench import hpl_makearch, hpl_sizing, sources
from clusterbench.bench.source import Source
from clusterbench.checks.plugins import hplproblem
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.plugins.spack import BLAS_PROVIDERS, MPI_FLAVOURS
from clusterbench.checks.provisioning import Provisioned, release_fixture, say_once
from clusterbench.checks.release import mirror_hint, release_problem
from clusterbench.checks.resources import node_cores
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import hpl
from clusterbench.site import contract

INPUT_FILE = 'HPL.dat'
MAKE_FILE = f'Make.{hpl_makearch.ARCH}'
#: BLAS an HPL build may use (each an environment declares with extras.blas).
HPL_BLAS = (*BLAS_PROVIDERS, *(b for b in ('blis', 'mkl') if b not in BLAS_PROVIDERS))


@functools.lru_cache(maxsize=1)
def _build_host_arch():
    return cpuinfo().get('arch')


def nodes_match_build_host(partition):
    """Whether binaries built here may use this host's instruction set there.

    Yes for a partition whose jobs run on this host (``local``), or whose
    processor facts name the same microarchitecture ReFrame detects here.
    """
    if contract.runs_here(partition):
        return True
    arch = partition.processor.arch
    return bool(arch) and arch == _build_host_arch()


def hpl_tree(path):
    """*path* if it is an HPL 2.x top directory, else a one-line error."""
    for name in ('Make.top', 'Makefile'):
        if not os.path.isfile(os.path.join(path, name)):
            raise ReframeError(f'{path}: not an HPL 2.x source tree (no {name})')
    return os.path.abspath(path)


def hpl_dat(problem):
    """The HPL.dat of one problem ``{'n', 'nb', 'p', 'q'}``; results to stdout."""
    return hpl_sizing.hpl_dat(problem, device=6)


#: HPL: its release or an unpacked tree (``hpl_source``, which wins), built
#: by the check; or Spack.
HPL = Source('hpl', 'HPL', release=sources.DEFAULTS['hpl'], tree=True, spack='hpl')


class HPLBase(
    Provisioned,
    JudgedCheck,
    rfm.RegressionTest,
):
    """HPL on all cores of ``num_nodes`` nodes, built from its release or Spack.

    The MPI flavour, compiler and BLAS are parameters (each combination runs
    in the programming environment that declares it, with its own
    references). N fills ``hpl_mem_fraction`` of the nodes' memory (or is
    ``hpl_n``); the grid is the most nearly square one. A figure is recorded
    only when every test passed HPL's scaled-residual check and N and P x Q
    are the ones requested. Offline builds use ``-O3 -march=native`` only
    where the partition's nodes are of the build host's kind
    (:func:`nodes_match_build_host`), else ``-O3`` for the portable target
    (``hpl_native``: auto, yes, no).
    """

    descr = 'HPL 2.3'
    valid_systems = ['*']
    source = HPL
    hpl_url = variable(str, value=HPL.release.url)
    hpl_sha256 = variable(str, value=HPL.release.sha256)
    #: An unpacked HPL 2.x tree: wins over the release.
    hpl_source = variable(str, value='')
    spack_executable = 'xhpl'
    offline_provider = 'HPL from its release (hpl_url) or a tree (hpl_source)'
    reference_file = 'hpl.yaml'
    reference_index = [*BASE_INDEX, 'mpi', 'compiler', 'blas', 'hpl_order']
    mpi = parameter(MPI_FLAVOURS)
    blas = parameter(HPL_BLAS)
    num_nodes = variable(int, value=1)
    hpl_release = fixture(release_fixture(HPL), scope='session')
    #: Larger than HPCC's default: HPL's efficiency grows with N, and the
    #: standalone check is the one a site reads as its HPL figure. On a 2-core,
    #: 24 GiB node N is ~28,400 (~150 s), HPL ~92 % of the DGEMM rate; at
    #: HPCC's 0.035 (N ~10,400) it is ~85 %. Per node, so num_nodes scales N.
    hpl_mem_fraction = variable(float, value=0.25)
    hpl_nb = variable(int, value=192)
    #: Force HPL's N (0: size from memory).
    hpl_n = variable(int, value=0)
    #: The problem run (N, NB, P, Q) and its N, in the reference index as in
    #: HPCC: a run of another size gets no reference.
    hpl_problem = variable(dict, value={})
    hpl_order = variable(int, value=0)
    #: -march=native in offline builds: auto (where the nodes match the build
    #: host), yes, no.
    hpl_native = variable(str, value='auto')
    #: Optimization flags of offline builds (before the native flag).
    hpl_cflags = variable(str, value='-O3')
    #: The compiler flags of the offline build (kept in the run report).
    build_cflags = variable(str, value='')
    time_limit = '1h'
    output_program = 'xhpl'
    output_parser = hpl

    @run_after('init')
    def _release_or_hpcc(self):
        if self.build_mode != 'offline' or self.hpl_source:
            return
        reason = release_problem(self, 'hpl')
        if reason:
            self.valid_systems = []
            hint = mirror_hint(self, 'hpl')
            say_once(
                f'HPL from HPCC only (HPLCheck not run): {reason}; to build it, {hint}'
            )

    def offline_build(self):
        if self.hpl_source:
            tree = hpl_tree(self.hpl_source)
            self.build_provider = f'source {tree}'
        else:
            release = self.hpl_release
            self.skip_if(
                not release.available,
                f'HPL not built: {release.reason}; to build it, '
                f'{mirror_hint(self, "hpl")}',
            )
            tree = hpl_tree(sources.single_top(release.tree))
            self.build_provider = f'release {release.url} ({release.origin})'
        env = self.current_environ
        native = {'yes': True, 'no': False}.get(
            self.hpl_native, nodes_match_build_host(self.current_partition)
        )
        self.build_cflags = hpl_makearch.cflags(
            self.hpl_cflags, env.extras.get('compiler', 'gcc'), native
        )
        self.sourcesdir = tree
        self.build_system = 'CustomBuild'
        # TOPdir on the command line reaches every sub-make of HPL's build.
        self.build_system.commands = [
            f'make arch={hpl_makearch.ARCH} TOPdir="$PWD"',
        ]
        self.executable = os.path.join('.', 'bin', hpl_makearch.ARCH, 'xhpl')
        self.keep_files = [*self.keep_files, MAKE_FILE]

    @run_before('compile')
    def _write_make_arch(self):
        if not self.build_cflags:
            return
        env = self.current_environ
        try:
            text = hpl_makearch.make_arch(
                env.cc,
                self.build_cflags,
                hpl_makearch.blas_libs(env.extras),
                env.extras.get('blas_inc', ''),
                origin=f'environment {env.name}',
            )
        except ClusterbenchError as err:
            raise ReframeError(str(err)) from None
        os.makedirs(self.stagedir, exist_ok=True)
        with open(os.path.join(self.stagedir, MAKE_FILE), 'w') as f:
            f.write(text)

    @run_after('setup')
    def _size_job(self):
        cores = node_cores(self.current_partition)
        self.num_tasks_per_node = cores
        self.num_tasks = cores * self.num_nodes
        self.num_cpus_per_task = 1
        self.env_vars['OMP_NUM_THREADS'] = '1'
        self.env_vars['OPENBLAS_NUM_THREADS'] = '1'
        hplproblem.size(self)
        self.keep_files = [*self.keep_files, INPUT_FILE]

    @run_before('run')
    def _write_input(self):
        with open(os.path.join(self.stagedir, INPUT_FILE), 'w') as inp:
            inp.write(hpl_dat(self.hpl_problem))

    def output_expected(self):
        return {'n': self.hpl_problem['n'], 'nprocs': self.num_tasks}

"""STREAM (stream.c 5.10, OpenMP), built by the check itself or by Spack.

Offline (the default) the check compiles ``stream.c`` from its release
(``stream_url``/``stream_sha256``, fetched and verified once per session, see
:mod:`clusterbench.checks.release`) with each environment's C compiler and
OpenMP. With ``-S build_mode=spack`` Spack builds it from the partition's
environment instead. When the release cannot be had (offline, nothing in
the cache or ``$CLUSTERBENCH_MIRROR``) the check is not generated and the
session says once why: the default suite then has STREAM from HPCC only.
"""

import math
import platform

import reframe as rfm
from reframe.core.backends import getlauncher
from reframe.core.builtins import (
    fixture,
    run_after,
    run_before,
    variable,
)

from clusterbench.bench import sources
from clusterbench.bench.source import Source
from clusterbench.checks.plugins.judged import JudgedCheck
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.provisioning import Provisioned, release_fixture, say_once
from clusterbench.checks.release import mirror_hint, release_problem
from clusterbench.checks.resources import node_cores
from clusterbench.machine import lastlevelcache
from clusterbench.parsers import stream
from clusterbench.site.contract import PartitionSpec

#: stream.c's own default array size: the floor when the caches are small.
MIN_ARRAY_SIZE = 10_000_000
#: OpenMP flag per compiler family (the environment's ``extras.compiler``).
OPENMP_FLAGS = {
    'gcc': '-fopenmp',
    'clang': '-fopenmp',
    'aocc': '-fopenmp',
    'cce': '-fopenmp',
    'intel': '-qopenmp',
    'oneapi': '-qopenmp',
    'nvhpc': '-mp',
}


def array_size(llc_bytes, element_bytes=8, minimum=MIN_ARRAY_SIZE):
    """Elements per array: at least 4x the sum of the last-level caches.

    STREAM's rule (stream.c's header); never below *minimum*, and rounded up
    to a whole million so that nearby cache sizes give the same build.
    """
    need = math.ceil(4 * (llc_bytes or 0) / element_bytes)
    return math.ceil(max(need, minimum) / 1_000_000) * 1_000_000


def openmp_flag(environ):
    """The environment's OpenMP flag: ``extras.openmp_flag``, else by compiler."""
    extras = environ.extras
    return extras.get('openmp_flag') or OPENMP_FLAGS.get(
        extras.get('compiler', 'gcc'), '-fopenmp'
    )


#: STREAM: stream.c from its release (built by the check), or Spack.
STREAM = Source(
    'stream',
    'STREAM',
    release=sources.DEFAULTS['stream'],
    spack='stream',
    label='Stream',
)


class StreamBase(Provisioned, JudgedCheck, rfm.RegressionTest):
    """STREAM on one node, one OpenMP thread per core.

    Built from stream.c's release (or by Spack in a Spack session). The array
    size is at least four times the sum of the node's last-level caches
    (:mod:`clusterbench.machine.lastlevelcache`), and never below stream.c's default;
    ``stream_array_size`` forces it. Threads and binding come from the
    partition: ``OMP_NUM_THREADS`` its cores (or ``stream_threads``),
    ``OMP_PROC_BIND`` and ``OMP_PLACES`` its ``extras.omp_proc_bind``
    (spread) and ``extras.omp_places`` (cores). A figure is recorded only when STREAM
    printed ``Solution Validates`` and counted the threads requested. No MPI:
    the compiler is the only stack parameter.
    """

    descr = 'STREAM (stream.c) with OpenMP'
    valid_systems = ['*']
    source = STREAM
    #: The release's URL (file://, http://, https://) and sha256.
    stream_url = variable(str, value=STREAM.release.url)
    stream_sha256 = variable(str, value=STREAM.release.sha256)
    spack_executable = 'stream_c.exe'
    offline_provider = 'stream.c from its release (stream_url)'
    reference_file = 'stream.yaml'
    reference_index = [*BASE_INDEX, 'compiler']
    stream_release = fixture(release_fixture(STREAM), scope='session')
    #: OpenMP threads run (set at setup).
    threads = variable(int, value=0)
    #: OpenMP threads to run (0: the node's cores; 1 compares with HPCC's
    #: single-process STREAM).
    stream_threads = variable(int, value=0)
    #: Elements per array (0: from the last-level caches).
    stream_array_size = variable(int, value=0)
    #: Times each kernel runs (stream.c's NTIMES; the best is reported).
    stream_ntimes = variable(int, value=10)
    #: The array size built (kept in the run report).
    array_size = variable(int, value=0)
    #: The nodes' last-level caches it was sized from (0: not known).
    llc_bytes = variable(int, value=0)
    time_limit = '10m'
    output_program = 'stream'
    output_parser = stream

    @run_after('init')
    def _release_or_hpcc(self):
        if self.build_mode != 'offline':
            return
        reason = release_problem(self, 'stream')
        if reason:
            self.valid_systems = []
            hint = mirror_hint(self, 'stream')
            say_once(
                f'STREAM from HPCC only (StreamCheck not run): {reason}; '
                f'to build it, {hint}'
            )

    def offline_build(self):
        release = self.stream_release
        self.skip_if(
            not release.available,
            f'STREAM not built: {release.reason}; to build it, '
            f'{mirror_hint(self, "stream")}',
        )
        self.build_provider = f'release {release.url} ({release.origin})'
        part = self.current_partition
        flag = openmp_flag(self.current_environ)
        spec = PartitionSpec.of(part)
        self.llc_bytes = (
            lastlevelcache.node_llc_bytes(
                spec.llc_bytes, part.processor.topology, spec.runs_here
            )
            or 0
        )
        size = self.stream_array_size or array_size(self.llc_bytes)
        self.array_size = size
        cflags = [
            '-O3',
            flag,
            f'-DSTREAM_ARRAY_SIZE={size}',
            f'-DNTIMES={self.stream_ntimes}',
        ]
        if 3 * 8 * size >= 2**31 and platform.machine() == 'x86_64':
            # stream.c's arrays are static: past 2 GiB x86-64 needs this model.
            cflags.append('-mcmodel=medium')
        self.sourcesdir = release.tree
        self.build_system = 'SingleSource'
        self.sourcepath = sources.filename_of(release.url)
        self.build_system.executable = 'stream'
        self.build_system.cflags = cflags
        self.build_system.ldflags = [flag]
        self.executable = './stream'

    @run_after('setup')
    def _size_job(self):
        spec = PartitionSpec.of(self.current_partition)
        self.threads = self.stream_threads or node_cores(self.current_partition)
        self.num_tasks = 1
        self.num_tasks_per_node = 1
        self.num_cpus_per_task = self.threads
        self.env_vars['OMP_NUM_THREADS'] = str(self.threads)
        self.env_vars['OMP_PROC_BIND'] = spec.omp_proc_bind
        self.env_vars['OMP_PLACES'] = spec.omp_places

    @run_before('run')
    def _no_mpi_launcher(self):
        self.job.launcher = getlauncher('local')()

    def output_expected(self):
        return {'threads': self.threads}

"""MPI profiling for any check: ``-S mpi_profile=1`` runs it under src/mpiprof.

The plugin builds libmpiprof once per programming environment (with the
environment's MPI C compiler; make is a no-op when it is up to date) and
preloads it into the job (``LD_PRELOAD``), so it works for prebuilt binaries
such as ``hpcc`` as well as for our own. The job's profile, one JSON file, is
kept with the results; its MPI time share becomes the performance variable
``mpi_time_share`` (%), and a digest (per-call breakdown, message-size
histograms) goes into the run report as ``mpi_profile_summary``.

It builds on demand rather than as a fixture: a ReFrame fixture is always
instantiated, so every check would carry an extra build case even with
profiling off.
"""

import fcntl
import os
import subprocess

import reframe.utility.sanity as sn
from reframe.core.exceptions import ReframeError, SanityError

from clusterbench.bench import profile
from clusterbench.checks.shell import quote
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import declarations

PROFILE_FILE = 'mpiprof.json'

#: Our own sources, in a clusterbench tree (src/ beside the package, three
#: levels above clusterbench/checks/plugins/).
SOURCES = os.path.abspath(
    os.path.join(os.path.dirname(__file__), *['..'] * 3, 'src', 'mpiprof')
)


def build_library(sources, build_dir, cc, timeout=600):
    """Build libmpiprof.so into *build_dir* with *cc*; return its path.

    Concurrent callers for the same directory are serialized (file lock).
    """
    if not os.path.isfile(os.path.join(sources, 'Makefile')):
        raise ReframeError(
            f'mpiprof sources not found at {sources}; set mpiprof_sources '
            f'or mpiprof_library'
        )
    os.makedirs(build_dir, exist_ok=True)
    with open(os.path.join(build_dir, '.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            proc = subprocess.run(
                ['make', '-C', sources, f'BUILD={build_dir}', f'CC={cc}', 'all'],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            raise ReframeError(
                f'libmpiprof build with {cc} did not run: {err}'
            ) from None
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise ReframeError(
            f'libmpiprof did not build with {cc}: {lines[-1] if lines else "no output"}'
            f' (in {build_dir})'
        )
    return os.path.join(build_dir, 'libmpiprof.so')


@sn.deferrable
def _share_percent(path):
    try:
        return 100.0 * profile.mpi_time_share(profile.load(path))
    except ClusterbenchError as err:
        raise SanityError(str(err)) from None


@sn.deferrable
def agrees_with_cgsolver(path, result):
    """Sanity: the profile's Isend/Irecv/(I)Allreduce calls and bytes equal
    the counters that cgsolver keeps itself (``mpi_counts``)."""
    try:
        rows = profile.cross_check(profile.load(path), result)
    except ClusterbenchError as err:
        raise SanityError(str(err)) from None
    wrong = [
        f'{name} solver {mine} != profile {seen}'
        for name, mine, seen, ok in rows
        if not ok
    ]
    if wrong:
        raise SanityError('MPI profile disagrees with cgsolver: ' + '; '.join(wrong))
    return True


def preload(check):
    """After setup (last): preload the profiler into the job, when on."""
    if not check.mpi_profile:
        return
    lib = check.mpiprof_library
    if not lib:
        # One build per environment, shared by the session's tests.
        env_dir = os.path.dirname(check.stagedir)
        lib = build_library(
            check.mpiprof_sources,
            os.path.join(env_dir, '_mpiprof'),
            check.current_environ.cc,
        )
    elif not os.path.isfile(lib):
        raise ReframeError(f'mpiprof_library {lib}: no such file')
    # env_vars are exported unquoted: the values are shell words here.
    old = check.env_vars.get('LD_PRELOAD')
    check.env_vars['LD_PRELOAD'] = f'{quote(lib)}:{old}' if old else quote(lib)
    check.env_vars['MPIPROF_OUTPUT'] = quote(check.mpi_profile_path)
    check.keep_files = [*check.keep_files, PROFILE_FILE]


def read(check):
    """Before sanity: the profile's digest into ``mpi_profile_summary``."""
    if not check.mpi_profile:
        return
    try:
        found = profile.load(check.mpi_profile_path)
        check.mpi_profile_summary = profile.summary(found)
    except ClusterbenchError:
        # The performance variable reports why, if the run got that far.
        check.mpi_profile_summary = {}


def add_time_share(check):
    """Before performance: the MPI time share becomes a performance variable."""
    if check.mpi_profile:
        share = declarations.MPI_TIME_SHARE
        check.perf_variables[share.name] = sn.make_performance_function(
            _share_percent(check.mpi_profile_path), share.unit
        )

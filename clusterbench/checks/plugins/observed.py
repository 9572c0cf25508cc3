"""What every run of a library check is observed by: MPI profiling (on
request, :mod:`~clusterbench.checks.plugins.profiling`), the node facts
(:mod:`~clusterbench.checks.plugins.nodefacts`) and energy
(:mod:`~clusterbench.checks.plugins.energy`). One plugin holds their
variables and hooks, so a check has one project class for all three; the
work stays in those modules, one function per stage. A check lists it first
among its bases::

    class CGSolverBase(Observed, JudgedCheck, rfm.RunOnlyRegressionTest):
"""

import os

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable

from clusterbench.checks.plugins import energy, nodefacts, profiling

#: What each stage does, in order. The ``*_LAST`` steps run after every
#: other hook of their stage but the judged check's last ones (the launcher
#: wrapper, the disturbed-run verdict): ReFrame runs the last hooks in the
#: reverse order of registration, and a check lists this plugin before
#: ``JudgedCheck``.
AFTER_SETUP_LAST = (profiling.preload,)
BEFORE_RUN_LAST = (nodefacts.collect, energy.start_sampler)
BEFORE_SANITY = (energy.read, nodefacts.read, profiling.read)
BEFORE_PERFORMANCE_LAST = (profiling.add_time_share, energy.add_figures)


class Observed(rfm.RegressionTestPlugin):
    """``-S mpi_profile=1`` profiles; node facts and energy come with every
    run (``-S record_node_facts=0``, ``-S measure_energy=0`` turn them off)."""

    #: Profile the job (off by default: ``-S mpi_profile=1`` turns it on).
    mpi_profile = variable(bool, value=False)
    #: A prebuilt libmpiprof.so matching the environment's MPI (skips the build).
    mpiprof_library = variable(str, value='')
    #: Where the library's sources are.
    mpiprof_sources = variable(str, value=profiling.SOURCES)
    #: Digest of the job's profile, kept in the run report.
    mpi_profile_summary = variable(typ.Dict[str, object], value={})

    #: Collect the facts (on by default).
    record_node_facts = variable(bool, value=True)
    #: {host: digest of its facts}, kept in the run report.
    node_facts = variable(typ.Dict[str, object], value={})

    #: Sample energy around the benchmark (on by default).
    measure_energy = variable(bool, value=True)
    #: Seconds between readings.
    energy_interval = variable(float, value=2.0)
    #: File system root of /sys (tests point it at a canned tree).
    energy_sysfs_root = variable(str, value='/')
    #: What the sampler found, kept in the run report.
    energy_summary = variable(typ.Dict[str, object], value={})

    @property
    def mpi_profile_path(self):
        return os.path.join(self.stagedir, profiling.PROFILE_FILE)

    @run_after('setup', always_last=True)
    def _observe_after_setup(self):
        _each(AFTER_SETUP_LAST, self)

    @run_before('run', always_last=True)
    def _observe_before_run(self):
        _each(BEFORE_RUN_LAST, self)

    @run_before('sanity')
    def _observe_before_sanity(self):
        _each(BEFORE_SANITY, self)

    @run_before('performance', always_last=True)
    def _observe_before_performance(self):
        _each(BEFORE_PERFORMANCE_LAST, self)


def _each(steps, check):
    for step in steps:
        step(check)

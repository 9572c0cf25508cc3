"""Checks of the library combined with the profiling, provenance and energy
plugins, for tests/test_profiling_check.py (not registered for real runs)."""

import os

import reframe as rfm
from reframe.core.builtins import fixture

from clusterbench.checks.cgsolver import CGSolverBase, CGSolverBuild
from clusterbench.checks.hpcc import HPCCBase

PROJECT = os.path.join(os.path.dirname(__file__), '..', '..')


class _CGSolverSources(CGSolverBuild):
    sourcesdir = os.path.join(PROJECT, 'src', 'cgsolver')


# The library's bases are already Observed (profiling on request, node facts,
# energy); these subclasses only bind the sources.
@rfm.simple_test
class InstrumentedCGSolver(CGSolverBase):
    cgsolver_build = fixture(_CGSolverSources, scope='environment')


@rfm.simple_test
class InstrumentedHPCC(HPCCBase):
    pass


@rfm.simple_test
class CGSolverCannedEnergy(InstrumentedCGSolver):
    """Unprofiled; energy read from a canned RAPL tree (energy_sysfs_root)."""

    valid_prog_environs = ['+openmpi']

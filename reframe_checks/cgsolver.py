"""The sparse CG solver of src/cgsolver on every partition with MPI."""

import os

import reframe as rfm
from reframe.core.builtins import fixture

from clusterbench.checks.cgsolver import CGSolverBase, CGSolverBuild

SOURCES = os.path.join(os.path.dirname(__file__), '..', 'src', 'cgsolver')


class CGSolverSources(CGSolverBuild):
    sourcesdir = SOURCES


@rfm.simple_test
class CGSolverCheck(CGSolverBase):
    cgsolver_build = fixture(CGSolverSources, scope='environment')
    tags = {'default', 'cg', 'solver'}
    maintainers = ['clusterbench']

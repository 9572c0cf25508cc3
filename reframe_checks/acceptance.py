"""Node acceptance and multi-node scaling (partitions with feature multinode).

Node battery, on every node at once:
``reframe ... -n NodeProbeCheck -n NodeCGCheck --distribute -r``, then
``clusterbench acceptance nodes REPORT``.
Scaling (``-P node_count=1,2``): ``clusterbench acceptance scaling
REPORT`` for speedup and parallel efficiency.
"""

import os

import reframe as rfm
from reframe.core.builtins import fixture

from clusterbench.checks.acceptance import (
    CGScalingBase,
    HPCCScalingBase,
    NodeCGBase,
    NodeProbeBase,
    NPBScalingBase,
)
from clusterbench.checks.cgsolver import CGSolverBuild
from clusterbench.checks.fabric import FabricBuild
from clusterbench.checks.npb import NPBBinaries

SRC = os.path.join(os.path.dirname(__file__), '..', 'src')


class NodeProbeProgram(FabricBuild):
    sourcesdir = os.path.join(SRC, 'fabric')


class CGSolverProgram(CGSolverBuild):
    sourcesdir = os.path.join(SRC, 'cgsolver')


class NPBForScaling(NPBBinaries):
    """The binaries, found relative to this directory (spack_envs/ beside it)."""


@rfm.simple_test
class NodeProbeCheck(NodeProbeBase):
    fabric_build = fixture(NodeProbeProgram, scope='environment')
    tags = {'acceptance', 'node'}
    maintainers = ['clusterbench']


@rfm.simple_test
class NodeCGCheck(NodeCGBase):
    cgsolver_build = fixture(CGSolverProgram, scope='environment')
    tags = {'acceptance', 'node'}
    maintainers = ['clusterbench']


@rfm.simple_test
class CGScalingCheck(CGScalingBase):
    cgsolver_build = fixture(CGSolverProgram, scope='environment')
    tags = {'multinode', 'scaling', 'cg'}
    maintainers = ['clusterbench']


@rfm.simple_test
class HPCCScalingCheck(HPCCScalingBase):
    tags = {'multinode', 'scaling', 'hpl'}
    maintainers = ['clusterbench']


@rfm.simple_test
class NPBScalingCheck(NPBScalingBase):
    npb_binaries = fixture(NPBForScaling, scope='environment')
    tags = {'multinode', 'scaling', 'npb'}
    maintainers = ['clusterbench']

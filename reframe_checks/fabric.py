"""Fabric acceptance and point-to-point between two nodes (multi-node partitions).

``FabricCheck``: every pair of the partition's nodes in O(N) rounds (our
src/fabric); ``clusterbench acceptance links REPORT`` names the bad
links. ``PointToPointCheck``: latency, bandwidth and message rate between two
nodes.
"""

import os

import reframe as rfm
from reframe.core.builtins import fixture

from clusterbench.checks.fabric import FabricBase, FabricBuild

SOURCES = os.path.join(os.path.dirname(__file__), '..', 'src', 'fabric')


class FabricPrograms(FabricBuild):
    sourcesdir = SOURCES


@rfm.simple_test
class FabricCheck(FabricBase):
    fabric_build = fixture(FabricPrograms, scope='environment')
    tags = {'acceptance', 'fabric'}
    maintainers = ['clusterbench']


@rfm.simple_test
class PointToPointCheck(FabricBase):
    descr = 'Point-to-point between two nodes: latency, bandwidth, message rate'
    fabric_build = fixture(FabricPrograms, scope='environment')
    fabric_nodes = 2
    tags = {'multinode', 'p2p', 'latency'}
    maintainers = ['clusterbench']

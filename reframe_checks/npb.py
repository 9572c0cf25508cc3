"""The NAS Parallel Benchmarks 3.x (MPI) on every partition with MPI.

NPB is built from its release (NPB 3.4.3) unless the site gives it:
``-S npb_source=<NPB3.4-MPI tree>``, ``-S npb_prefix=<dir>``,
``-S npb_module=<module>``, or Spack with the partition's environment in
``spack_envs/`` (see clusterbench/checks/npb.py).
"""

import reframe as rfm
from reframe.core.builtins import fixture

from clusterbench.checks.npb import NPBBase, NPBBinaries


class NPBProvided(NPBBinaries):
    """The binaries, found relative to this directory (spack_envs/ beside it)."""


@rfm.simple_test
class NPBCheck(NPBBase):
    npb_binaries = fixture(NPBProvided, scope='environment')
    tags = {'npb', 'nas'}
    maintainers = ['clusterbench']

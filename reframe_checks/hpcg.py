"""HPCG built by Spack from each partition's environment (-S build_mode=spack)."""

import reframe as rfm

from clusterbench.checks.hpcg import HPCGBase


@rfm.simple_test
class HPCGCheck(HPCGBase):
    tags = {'spack', 'hpcg'}
    maintainers = ['clusterbench']

"""HPL built by Spack from each partition's environment (-S build_mode=spack)."""

import reframe as rfm

from clusterbench.checks.hpl import HPLBase


@rfm.simple_test
class HPLCheck(HPLBase):
    tags = {'spack', 'hpl'}
    maintainers = ['clusterbench']

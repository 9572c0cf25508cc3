"""HPL built from its release (or -S hpl_source=DIR) against each environment's
MPI and BLAS; Spack builds it with -S build_mode=spack.

Not generated, with one line saying why, when the release cannot be had
(see clusterbench/checks/hpl.py).
"""

import reframe as rfm

from clusterbench.checks.hpl import HPLBase


@rfm.simple_test
class HPLCheck(HPLBase):
    tags = {'spack', 'hpl'}
    maintainers = ['clusterbench']

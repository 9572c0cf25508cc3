"""Every declared figure: the one catalog that parsers, checks, verdicts,
reference validation and portable verdicts read.

Each benchmark's parser declares its figures (``DECLARED``); the figures no
parser records are declared in :mod:`clusterbench.parsers.declarations`.
"""

from clusterbench.core.figures import Catalog
from clusterbench.parsers import (
    cgsolver,
    declarations,
    hpcc,
    hpcg,
    hpl,
    imb,
    netpipe,
    npb,
    osu,
    stream,
)

CATALOG = Catalog(
    hpl.DECLARED,
    hpcc.DECLARED,
    hpcg.DECLARED,
    stream.DECLARED,
    npb.DECLARED,
    cgsolver.DECLARED,
    osu.DECLARED,
    imb.DECLARED,
    netpipe.DECLARED,
    declarations.DECLARED,
)

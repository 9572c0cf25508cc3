"""Every declared figure: the one catalog that parsers, checks, verdicts,
reference validation and portable verdicts read.

Each benchmark's parser declares its figures (``DECLARED``); the figures no
parser records are declared in :mod:`clusterbench.parsers.declarations`.
"""

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import Band, Catalog
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

#: The modules that declare figures, in the order their declarations count.
MODULES = (hpl, hpcc, hpcg, stream, npb, cgsolver, osu, imb, netpipe, declarations)

CATALOG = Catalog(*(module.DECLARED for module in MODULES))


def declared_in(figure):
    """``clusterbench/parsers/hpcc.py``: the module whose ``DECLARED`` holds
    *figure* (the first, as the catalog keeps it)."""
    for module in MODULES:
        if figure in module.DECLARED:
            return 'clusterbench/parsers/' + module.__name__.rsplit('.', 1)[1] + '.py'
    return 'clusterbench/parsers'


def bands_of(declared, where):
    """``{figure: Band}`` of a partition's ``portable_bands`` (``{name:
    [lower, upper]}``), or one line naming *where* and the key at fault."""
    if not isinstance(declared, dict):
        raise ClusterbenchError(f'{where}: portable_bands must be a mapping')
    bands = {}
    for name, band in declared.items():
        found = CATALOG.declared(str(name))
        if found is None or found.band is None:
            known = ', '.join(sorted(f.name for f in CATALOG.portable()))
            raise ClusterbenchError(
                f'{where}: portable_bands: {name!r} is no portable figure ({known})'
            )
        try:
            lower, upper = (float(x) for x in band)
        except (TypeError, ValueError):
            lower = upper = None
        if lower is None or not lower < upper:
            raise ClusterbenchError(
                f'{where}: portable_bands: {name}: {band!r} is not [lower, upper]'
            )
        bands[name] = Band(lower, upper, f'{where}: portable_bands')
    return bands

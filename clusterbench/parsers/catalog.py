"""Every declared figure: the one catalog that parsers, checks, verdicts,
reference validation and portable verdicts read.

Each benchmark's parser declares its figures (``DECLARED``); the figures no
parser records are declared in :mod:`clusterbench.parsers.declarations`.
Every module of this package that has a ``DECLARED`` is in the catalog: a
new benchmark's parser is found by being there, no list names it.
"""

import importlib
import pkgutil

import clusterbench.parsers
from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import Band, Catalog


def _declaring_modules():
    found = []
    for info in pkgutil.iter_modules(clusterbench.parsers.__path__):
        if info.name == 'catalog':
            continue
        module = importlib.import_module(f'clusterbench.parsers.{info.name}')
        if hasattr(module, 'DECLARED'):
            found.append(module)
    return tuple(sorted(found, key=lambda m: m.__name__))


#: The modules that declare figures, by name (a figure declared twice must be
#: declared alike, so their order changes nothing).
MODULES = _declaring_modules()

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

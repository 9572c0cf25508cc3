"""Every figure's band and where it comes from, as one table a person reads
(`clusterbench references show`).

One row per reference figure of a reference directory: where it applies
(system:partition, environment, CPU kind), the test's short name with its
parameters, the figure and unit, the reference, its band, the sessions it
was made from (their number and dates, from the provenance) and the spread
measured between them; then one row per portable figure: its default band
and the declaration that holds it, or a site's override
(``extras.portable_bands``).

A band wider than :data:`WIDE` on its bad side (as ``references check``
measures it: a share near zero in points of the whole) is named in the
``note`` column with the measured spread that made it wide: the reader sees
which figures cannot resolve a 10 % change, and why. A figure whose band
would be wider than ±100 % has none (references.widebands): its row, from
the provenance, says ``context only`` and what the band would be.
"""

import dataclasses
import glob
import io
import os
import re
import textwrap
from dataclasses import dataclass

from clusterbench.core import csvfile, jsontext
from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import MEMORY, SOLVER
from clusterbench.judging import stats, verdict, view, vocabulary
from clusterbench.parsers import catalog
from clusterbench.references import directory as refdir
from clusterbench.references import floors, proposalview, provenance, yamlfile
from clusterbench.references import validate as refdata

#: A band wider than this on its bad side cannot flag a 10 % regression.
WIDE = verdict.DETECTION_THRESHOLD
#: A report path names its session's start: ``local/20261124T104659/...``.
_STAMP = re.compile(r'(?:^|/)(\d{4})(\d{2})(\d{2})T\d{6}(?:/|$)')
#: The kinds of figure a core's arithmetic bounds (references.floors).
COMPUTE_KINDS = ('DGEMM rate', 'HPL rate')
#: The classes whose bands should resolve a 10 % change on any quiet node.
STEADY_CLASSES = ('compute-bound', '1-rank')
#: The note of a figure kept as context only (references.widebands).
CONTEXT = 'context only'


@dataclass
class Row:
    system: str
    environ: str
    cpu_kind: str
    test: str
    figure: str
    unit: str
    #: The reference value (None for a portable figure: its band is absolute).
    reference: object
    #: The band as written: relative to the reference, or absolute (portable).
    lower: object
    upper: object
    band: str
    #: 'compute-bound', 'memory-bound', '1-rank' or '' (see figure_class()).
    figure_class: str
    #: 'sessions', 'no provenance', 'portable default' or 'site override'.
    source: str
    #: The file that holds the band (provenance, declaration or site config).
    where: str
    sessions: object
    dates: str
    #: Robust relative spread of the session medians (None when unknown).
    spread: object
    #: Why the band is what it is: 'wide: ...' or a portable band's source.
    note: str
    #: A portable band's floor against the healthy and faulty values it was
    #: measured between (figures.Band.margin); '' for the others.
    margin: str = ''

    @property
    def portable(self):
        return self.reference is None and not self.context

    @property
    def wide(self):
        return self.note.startswith('wide')

    @property
    def context(self):
        """A figure without a band: it would be wider than ±100 %."""
        return self.note.startswith(CONTEXT)


COLUMNS = tuple(Row.__dataclass_fields__)


def figure_class(test, variable, unit, params, siblings=()):
    """'compute-bound' for a figure of a kind that a core's arithmetic bounds
    (DGEMM, HPL: references.floors); 'memory-bound' for an absolute rate or
    time that the memory bandwidth bounds (a STREAM figure, one declared
    ``bound=MEMORY``, or the time of a solve whose rates, among the
    (figure, unit) *siblings* of its test, are): on a node whose bandwidth
    neighbours share it moves with theirs, and its steady judge is its share
    of an in-job triad; '1-rank' for another figure of a test run on one
    rank per node (its ``ranks_per_node`` or ``num_tasks`` parameter);
    else ''."""
    kind = floors.kind_of(test, variable, unit, params)
    if kind in COMPUTE_KINDS:
        return 'compute-bound'
    if kind == 'memory bandwidth' or _memory_bound(variable, unit, siblings):
        return 'memory-bound'
    return '1-rank' if floors.one_rank(params) else ''


def _memory_bound(variable, unit, siblings):
    bound = catalog.CATALOG.bound
    if bound(variable, unit) == MEMORY:
        return True
    # A time is the inverse of its solve's rates: bound by what bounds them.
    return catalog.CATALOG.kind(variable, unit) == SOLVER and any(
        bound(name, other) == MEMORY for name, other in siblings
    )


def rows(root, system=None, site_configs=None):
    """The rows of every reference under *root* (of *system* only, when
    given: ``name`` or ``name:partition``), then those of the portable
    figures; a system with neither references nor a site override is one
    line naming the systems that have references."""
    if not os.path.isdir(root):
        raise ClusterbenchError(f'{root}: no such reference directory')
    refdata.check_directory(root)
    systems = refdir.systems(root)
    chosen = systems
    if system is not None:
        chosen = [name for name in systems if name == system.split(':')[0]]
    found = []
    for name in chosen:
        found += _system_rows(os.path.join(root, name), system)
    more = portable_rows(site_configs, system)
    if system and not found and all(r.system == '*' for r in more):
        have = ', '.join(systems) or 'none'
        raise ClusterbenchError(
            f'{root}: no references of {system!r} (systems with references: '
            f'{have}) and no portable band of it in {site_configs}'
        )
    return found + more


def _system_rows(directory, only):
    """The rows of the references of one system directory (of partition
    *only*, when it names one)."""
    found = []
    for path in sorted(glob.glob(os.path.join(directory, '*.yaml'))):
        name = os.path.basename(path)
        prov_path = os.path.join(directory, provenance.PROVENANCE_DIR, name)
        prov = provenance.records(provenance.load(prov_path))
        refs = yamlfile.load(path)
        for test, index, key, leaf in [
            *provenance.entries(refs),
            *_context_entries(refs, prov),
        ]:
            if not isinstance(leaf, dict):
                continue
            params = dict(zip(index, key))
            where = str(params.get('$partition') or os.path.basename(directory))
            if only and ':' in only and where != only:
                continue
            entry = (prov.get(test) or {}).get(provenance.where(key))
            version = provenance.current(entry) if entry else None
            made = provenance.figures(entry) if entry else {}
            source, sessions, dates = _source(version)
            place = Row(
                system=where, environ=str(params.get('$environ', '')),
                cpu_kind=str(params.get('cpu_kind', '')),
                test=proposalview.short_test(test, index, key), figure='',
                unit='', reference=None, lower=None, upper=None, band='',
                figure_class='', source=source, where=prov_path, sessions=sessions,
                dates=dates, spread=None, note='',
            )  # fmt: skip
            entries = {}
            for variable, entry_ in leaf.items():
                if isinstance(entry_, list) and entry_ and entry_[0] == '$xfail':
                    entry_ = entry_[2]
                entries[variable] = entry_
            siblings = tuple((v, refdata.unit_of(e)) for v, e in entries.items())
            for variable, entry_ in entries.items():
                found.append(
                    _reference_row(
                        place, test, params, variable, entry_, made, siblings
                    )
                )
            for variable, why in provenance.context_only(entry).items():
                if variable not in entries:
                    found.append(_context_row(place, variable, why, made))
    return found


def _context_entries(refs, prov):
    """(test, $index, key, {}) of each provenance entry of context figures
    only, which has no entry in the reference file *refs*."""
    there = provenance.leaves(refs)
    for test, entries in prov.items():
        body = refs.get(test) if isinstance(refs, dict) else None
        index = tuple((body or {}).get('$index') or ['$partition'])
        for where, entry in (entries if isinstance(entries, dict) else {}).items():
            key = tuple(str(where).split('/'))
            if (test, where) in there or len(key) != len(index):
                continue
            if provenance.context_only(entry):
                yield test, index, key, {}


def _context_row(place, variable, why, made):
    """The row of a figure kept as context only: what its band would be."""
    figure = (made or {}).get(variable) or {}
    entry = figure.get('reference')
    entry = entry if isinstance(entry, list) and len(entry) >= 3 else [None] * 4
    medians = figure.get('session_medians') or []
    spread = stats.relative_spread(medians) if len(medians) > 1 else None
    return dataclasses.replace(
        place,
        figure=variable,
        unit=refdata.unit_of(entry) if entry[0] is not None else '',
        reference=entry[0],
        spread=None if spread is None else round(spread, 4),
        note=f'{CONTEXT}: {why}',
    )


def _reference_row(place, test, params, variable, entry, made, siblings=()):
    ref, lower, upper = entry[:3]
    unit = refdata.unit_of(entry)
    medians = ((made or {}).get(variable) or {}).get('session_medians') or []
    spread = stats.relative_spread(medians) if len(medians) > 1 else None
    width = verdict.bad_side_width(variable, unit, ref, lower, upper) if ref else 0
    note = ''
    if refdata.wider(width, WIDE):
        if spread is None:
            note = 'wide: no spread between sessions recorded'
        else:
            note = f'wide: the sessions lay {_reach(medians, ref)} from it'
    return dataclasses.replace(
        place,
        figure=variable,
        unit=unit,
        reference=ref,
        lower=lower,
        upper=upper,
        band=_band_text(variable, unit, ref, lower, upper),
        figure_class=figure_class(test, variable, unit, params, siblings),
        spread=None if spread is None else round(spread, 4),
        note=note,
    )


def _band_text(variable, unit, ref, lower, upper):
    """The band in the words its verdict uses: relative to the reference,
    or for a share near zero its range in points of the whole."""
    if vocabulary.is_share(variable, unit):
        low, high = verdict.bounds(ref, lower, upper)
        return f'{number(max(low, 0), 3)}..{number(high, 3)} {unit}'
    return view.band(lower, upper)


def number(value, digits):
    """*value* to *digits* significant digits, never in exponent notation
    above 1 (``32100``, not ``3.21e+04``): one format for a column."""
    text = f'{value:.{digits}g}'
    return f'{value:.0f}' if 'e+' in text else text


def _reach(medians, ref):
    """The session medians' lowest and highest, relative to the reference."""
    low, high = min(medians) / ref - 1, max(medians) / ref - 1
    return f'{low * 100:+.0f}..{high * 100:+.0f} %'


def _source(version):
    """(source, number of sessions, dates) of a reference entry whose
    provenance's version in use is *version* (None: no provenance)."""
    if version is None:
        return 'no provenance', None, ''
    return 'sessions', len(version.get('sessions') or []), _dates(version)


def _dates(version):
    """The first and last day of the sessions a reference was made from, by
    their report paths (a session's directory is its start), else the day
    it was made."""
    days = sorted(
        f'{m[1]}-{m[2]}-{m[3]}'
        for path in version.get('reports') or []
        for m in [_STAMP.search(str(path))]
        if m
    )
    if not days:
        made = str(version.get('made') or '')[:10]
        return f'made {made}' if made else ''
    return days[0] if days[0] == days[-1] else f'{days[0]}..{days[-1]}'


def portable_rows(site_configs=None, system=None):
    """The default band of every portable figure, with the declaration that
    holds it and its source; then each site override of the partitions of
    the site configs in *site_configs* (of *system* only, when given)."""
    found = [
        _portable_row('*', figure, band, 'portable default', declared)
        for figure in catalog.CATALOG.portable()
        for declared in [catalog.declared_in(figure)]
        for band in figure.bands
    ]
    for where, path, name, band in site_bands(site_configs, system):
        figure = catalog.CATALOG.declared(name)
        found.append(_portable_row(where, figure, band, 'site override', path))
    return found


def _portable_row(system, figure, band, source, where):
    # A variant's band names its parameters where a test's would be.
    variant = ' '.join(f'{k}={v}' for k, v in band.where)
    return Row(
        system=system, environ='*', cpu_kind='*', test=variant, figure=figure.name,
        unit=figure.unit, reference=None, lower=band.lower, upper=band.upper,
        band=f'{number(band.lower, 3)}..{number(band.upper, 3)} {figure.unit}'.strip(),
        figure_class='',
        source=source, where=where, sessions=None, dates='', spread=None,
        note=band.source, margin=band.margin,
    )  # fmt: skip


def site_bands(site_configs, system=None):
    """(system:partition, config path, figure, Band) of every
    ``extras.portable_bands`` of the site configs in the directory
    *site_configs* (none when None)."""
    if not site_configs:
        return []
    found = []
    for path in sorted(glob.glob(os.path.join(site_configs, '*.py'))):
        for where, spec in refdata.partition_specs(path):
            if system and system not in (where, where.split(':')[0]):
                continue
            if spec.portable_bands:
                bands = catalog.bands_of(spec.portable_bands, f'{path}: {where}')
                found += [(where, path, name, band) for name, band in bands.items()]
    return found


def render(table, fmt='table', root=None):
    """The rows as a person's table, CSV or JSON; the table names a file
    under the reference directory *root* (or the current directory) by its
    path there."""
    if fmt == 'csv':
        out = io.StringIO()
        writer = csvfile.writer(out, lineterminator='\n')
        writer.writerow(COLUMNS)
        writer.writerows([_csv_cell(v) for v in dataclasses.astuple(r)] for r in table)
        return out.getvalue().rstrip('\n')
    if fmt == 'json':
        return jsontext.dumps([dataclasses.asdict(r) for r in table], indent=1)
    return '\n'.join([*text(table, root), '', *summary(table)])


def _csv_cell(value):
    return '' if value is None else value


def text(table, root=None):
    """Lines for a person: a heading per place (system:partition,
    environment, CPU kind), under it a line per test with its sources, and a
    line per figure; then the portable figures, each with its source (a file
    under *root* or the current directory by its path there)."""
    shown = _shown_path(root)
    refs = [r for r in table if not r.portable]
    cells = [_figure_cells(r) for r in refs]
    widths = [max([len(c[i]) for c in cells] or [0]) for i in range(5)]
    lines, place, test = [], None, None
    for row, cell in zip(refs, cells):
        if (row.system, row.environ, row.cpu_kind) != place:
            place = (row.system, row.environ, row.cpu_kind)
            kind = f', CPU {row.cpu_kind}' if row.cpu_kind else ''
            lines += ['' if lines else None, f'{row.system}, {row.environ}{kind}']
            test = None
        if row.test != test:
            test = row.test
            lines.append(f'  {row.test}: {_sources(row, shown)}')
        line = '  '.join(c.ljust(w) for c, w in zip(cell, widths))
        lines.append(f'    {line}  {row.note}'.rstrip())
    lines = [line for line in lines if line is not None]
    portable = [r for r in table if r.portable]
    if portable:
        lines += ['', 'portable figures: judged in every run, references or not']
        width = max(len(r.figure) for r in portable)
        bands = max(len(r.band) for r in portable)
        for row in portable:
            where = '' if row.system == '*' else f' of {row.system}'
            variant = f' ({row.test})' if row.test else ''
            lines.append(
                f'  {row.figure:{width}}  {row.band:{bands}}  '
                f'{row.source}{where}{variant} ({shown(row.where)})'
            )
            for said in (row.note, row.margin and f'margin: {row.margin}'):
                lines += textwrap.wrap(
                    said, 100, initial_indent=' ' * 6, subsequent_indent=' ' * 6
                )
    return lines


def _shown_path(root):
    """A function that names a path under *root* (said on the first line)
    or the current directory by its path there, another as it is."""
    bases = [os.path.realpath(b) for b in (root, os.curdir) if b]

    def shown(path):
        real = os.path.realpath(path)
        for base in bases:
            if real.startswith(base.rstrip(os.sep) + os.sep):
                return os.path.relpath(real, base)
        return path

    return shown


def _sources(row, shown=str):
    if row.source != 'sessions':
        return f'{row.source} ({shown(row.where)})'
    plural = 's' if row.sessions != 1 else ''
    return f'{row.sessions} session{plural}, {row.dates} ({shown(row.where)})'


def _figure_cells(row):
    spread = '' if row.spread is None else f'spread {row.spread * 100:4.1f} %'
    return (
        row.figure,
        f'{number(row.reference, 4)} {row.unit}'.strip()
        if row.reference is not None
        else '',
        row.band,
        row.figure_class,
        spread,
    )


def summary(table):
    """The closing lines: per CPU kind, how many bands are wide, in all and
    among the compute-bound and 1-rank figures (the target is per kind)."""
    limit = f'±{WIDE * 100:.0f} %'
    refs = [r for r in table if not r.portable]
    # Grouped in one pass: a scan of every row per kind took minutes on a
    # file of 40,000 figures, one kind each.
    by_kind = {}
    for row in refs:
        by_kind.setdefault(row.cpu_kind, []).append(row)
    lines = []
    for kind, mine in sorted(by_kind.items()):
        context = sum(r.context for r in mine)
        mine = [r for r in mine if not r.context]
        named = [r for r in mine if r.figure_class in STEADY_CLASSES]
        memory = [r for r in mine if r.figure_class == 'memory-bound']
        lines.append(
            f'{f"CPU {kind}" if kind else "any CPU"}: {len(mine)} reference '
            f'figure(s)'
            + (
                f' and {context} context only (no band: wider than ±100 %)'
                if context
                else ''
            )
            + f', {sum(r.wide for r in mine)} with a band wider than '
            f'{limit} on its bad side (compute-bound and 1-rank: '
            f'{sum(r.wide for r in named)} of {len(named)}'
            + (
                f'; memory-bound, named with their spread: '
                f'{sum(r.wide for r in memory)} of {len(memory)}'
                if memory
                else ''
            )
            + ')'
        )
    return [
        *lines,
        f'{len(table) - len(refs)} portable band(s), default or site override',
        f'spread: 1.4826 x MAD / median of the session medians (about one '
        f'standard deviation); wide: a {limit} regression stays inside the band',
    ]

"""Deliberate reference updates: samples -> proposed references.

The samples are read from run reports by clusterbench.results.samples.

Per figure: samples are grouped by session (one report is one session, unless
reports share a session uuid). The reference is the median of the sessions'
medians and the tolerance reflects the spread *between* sessions (see
stats.session_band): ``max(floor, k * 1.4826 * MAD / |median|)`` of the
session medians, and at least the reach to the farthest session median plus
the floor; with one session, the spread of its samples. A share near zero
(vocabulary.SHARES) gets an absolute floor. Only figures of test cases that
passed their sanity check count. A band wider than ±100 % is written into no
reference file: its figure is context only, kept in the provenance
(references.widebands). Nothing is written unless
asked; one update is one transaction over all its files (refstore), updates
are serialized, and every reference keeps the history of the provenance of
the ones it replaced and a hash of the entry it describes (refprov).
"""

import datetime
import glob
import importlib.metadata
import os
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from clusterbench import __version__
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import stats, vocabulary
from clusterbench.references import directory as refdir
from clusterbench.references import proposalview, reffiles, widebands, yamlfile
from clusterbench.references import provenance as refprov
from clusterbench.references import store as refstore
from clusterbench.references import validate as refdata

PROVENANCE_DIR = refprov.PROVENANCE_DIR


@dataclass
class Samples:
    #: The system the samples ran on: its directory gets the reference.
    system: str
    test: str
    reference_file: str
    index: tuple
    key: tuple
    variable: str
    unit: str
    values: list = field(default_factory=list)
    sessions: set = field(default_factory=set)
    #: session -> its samples of this figure
    per_session: dict = field(default_factory=dict)
    nodes: set = field(default_factory=set)
    facts: dict = field(default_factory=dict)
    identity: dict = field(default_factory=dict)
    #: session -> the host probes measured before this test's runs in it
    probes: dict = field(default_factory=dict)
    #: The run reports the samples came from, in the order read.
    reports: list = field(default_factory=list)


def host_probe_of(samples):
    """The host probe of the sessions behind a reference: per figure, the
    median over sessions of each session's median; {} when none was probed."""
    per_figure = {}
    for probes in samples.probes.values():
        names = sorted({k for p in probes for k, v in p.items() if _number(v)})
        for name in names:
            values = [p[name] for p in probes if _number(p.get(name))]
            per_figure.setdefault(name, []).append(stats.median(values))
    if not per_figure:
        return {}
    found = {name: _round(stats.median(v), 4) for name, v in per_figure.items()}
    found['sessions'] = max(len(v) for v in per_figure.values())
    return found


def _host_probe_entry(samples):
    probe = host_probe_of(samples)
    return {'host_probe': probe} if probe else {}


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Proposal:
    samples: Samples
    reference: float
    tolerance: float
    spread: float
    #: Bound only the bad side (see band()).
    one_sided: bool = False
    #: The kind of figure whose floor applied (references.floors), or ''.
    kind: str = ''

    @property
    def better(self):
        if not self.one_sided:
            return None
        return vocabulary.direction(self.samples.variable, self.samples.unit)

    @property
    def entry(self):
        lower, upper = band(self.tolerance, self.better)
        return [_round(self.reference), lower, upper, self.samples.unit]

    @property
    def context(self):
        """Why this figure is written as context only (its band judges
        nothing: references.widebands), or ''."""
        s = self.samples
        return widebands.too_wide(s.variable, s.unit, self.entry)


def _round(value, digits=4):
    return float(f'{value:.{digits}g}')


def band(tolerance, better=None):
    """(lower, upper) of a relative tolerance. A spread wider than the value
    itself would allow a figure of the other sign: the band stops at zero on
    that side.

    With *better* (``higher`` or ``lower``, ``--one-sided``) only the bad side
    is bounded: ``(-tol, None)`` for a figure better higher, ``(None, tol)``
    for one better lower, as many ReFrame suites write them. Plain ReFrame
    then passes a faster figure, as clusterbench does; and clusterbench never
    reports FASTER for it (nothing to say that the reference is stale)."""
    lower, upper = max(-tolerance, -1.0), tolerance
    if better == vocabulary.HIGHER:
        return lower, None
    if better == vocabulary.LOWER:
        return None, upper
    return lower, upper


#: Fewer undisturbed sessions than this behind a reference: `baseline` and
#: `references update` write it only when forced (sessions.baseline).
MIN_SESSIONS = 3


def tolerance_of(
    values, floor=0.03, k=3.0, sessions=None, absolute_floor=None, margin=None
):
    """(reference, tolerance, relative spread) of one figure: *values* of one
    session, or *sessions* (one list of samples per session); see
    stats.session_band."""
    centre, tolerance, spread = stats.session_band(
        sessions or [values], floor, k, absolute_floor, margin
    )
    return centre, round(tolerance, 2), spread


def propose(groups, floor=0.03, k=3.0, min_samples=1, one_sided=False, floor_for=None):
    """A :class:`Proposal` per group of samples. *floor_for* (e.g.
    references.floors.floor_for) gives each group ``(floor, kind)``: its
    tolerance is then at least that floor, and *floor* stays the margin
    beyond the farthest session (see stats.session_band)."""
    proposals = []
    for group in groups:
        if len(group.values) < min_samples:
            continue
        share = vocabulary.is_share(group.variable, group.unit)
        least, kind, margin = floor, '', None
        if floor_for is not None:
            kind_floor, kind = floor_for(group)
            least, margin = max(floor, kind_floor), floor
        median, tolerance, spread = tolerance_of(
            group.values,
            least,
            k,
            sessions=list(group.per_session.values()) or None,
            absolute_floor=vocabulary.SHARE_FLOOR if share else None,
            margin=margin,
        )
        proposals.append(Proposal(group, median, tolerance, spread, one_sided, kind))
    return proposals


def repair_first(proposals, directory):
    """Complete or undo an interrupted update of each system directory that
    *proposals* write into (before :func:`diff` reads it); lines saying what
    was done."""
    done = []
    for system in sorted({p.samples.system for p in proposals}):
        folder = refdir.system_directory(directory, system)
        done += refstore.repair_if_interrupted(folder)
    return done


def diff(proposals, directory):
    """Lines describing old -> new for every proposal, as a reader reads them
    (:mod:`.proposalview`); a directory that an interrupted update left half
    applied is refused (see repair_first)."""
    files = {
        (refdir.system_directory(directory, s.system), s.reference_file)
        for s in (p.samples for p in proposals)
    }
    for folder in sorted({folder for folder, _ in files}):
        refstore.refuse_half_applied(folder)
    for folder, name in sorted(files):
        reffiles.load_references(os.path.join(folder, name))
    return proposalview.lines(proposals, directory)


_SESSION = re.compile(r'^\d{8}T\d{6}(-\d+)?$')


def portable_report_path(path, results='results'):
    """A report's path as it means something on another machine: relative to
    the results root (``local/20261122T015521/report.json``), else the
    ``<system>/<session>/report.json`` tail of a session directory, else the
    file name. Never an absolute path of this machine."""
    path, root = os.path.abspath(path), os.path.abspath(results)
    if path.startswith(root + os.sep):
        return os.path.relpath(path, root)
    parts = path.split(os.sep)
    if len(parts) >= 3 and _SESSION.match(parts[-2]):
        return '/'.join(parts[-3:])
    return parts[-1]


def write(proposals, directory, reports, stack=None, results='results', notes=None):
    """Apply *proposals* to the directories of the systems their samples ran
    on under the root *directory* (``<directory>/<system>/``), one
    transaction per system directory (see refstore); return the reference
    files written. An earlier interrupted update of a directory is repaired
    first; what that did is appended to *notes*."""
    refuse_unreadable(proposals)
    by_system = defaultdict(list)
    for prop in proposals:
        by_system[prop.samples.system].append(prop)
    now = _now().isoformat(timespec='seconds')
    report_paths = [portable_report_path(r, results) for r in reports]
    written = []
    for system, props in sorted(by_system.items()):
        folder = refdir.system_directory(directory, system)
        written += _write_system(props, folder, report_paths, now, stack, notes)
    return written


def refuse_unreadable(proposals):
    """One line for the first proposal whose entry every reader of the file
    would refuse (a unit no benchmark records, a control character): an
    update never writes what makes the next `run` fail. Named by the report
    it came from, its test and figure."""
    for prop in proposals:
        s = prop.samples
        why = refdata.entry_problem(s.variable, prop.entry)
        name = str(s.reference_file)
        if '/' in name or not refstore.STORED.match(name):
            # It is joined to the directory: `../x` would write outside it.
            why = f'reference file {name!r}: not a file name (NAME.yaml)'
        if why:
            report = s.reports[0] if s.reports else 'the reports'
            raise ClusterbenchError(
                f'{report}: {proposalview.short_name(s)}: {why}; nothing was written'
            )


def _write_system(proposals, directory, report_paths, now, stack, notes):
    """One transaction over the files of one system directory."""
    by_file = defaultdict(list)
    for prop in proposals:
        by_file[prop.samples.reference_file].append(prop)
    written = []
    sessions_name = os.path.join(PROVENANCE_DIR, refprov.SESSIONS_FILE)
    contents = {}
    made = {'made': now, 'reports': report_paths}
    with refstore.locked(directory):
        repaired = refstore.repair(directory)
        if notes is not None:
            notes += repaired
        sessions = reffiles.load_provenance(os.path.join(directory, sessions_name))
        for name, props in sorted(by_file.items()):
            path = os.path.join(directory, name)
            prov_name = os.path.join(PROVENANCE_DIR, name)
            refs = reffiles.load_references(path)
            prov = reffiles.load_provenance(os.path.join(directory, prov_name))
            prov = refprov.migrate(prov, sessions)
            cases = defaultdict(list)
            for prop in props:
                s = prop.samples
                refs.setdefault(s.test, {})['$index'] = list(s.index)
                figure = [s.test, *s.key, s.variable]
                if prop.context:
                    reffiles.nested_pop(refs, figure)  # a band that judges nothing
                else:
                    reffiles.nested_set(refs, figure, prop.entry)
                cases[(s.test, s.key)].append(prop)
            contents[name] = reffiles.dump(refs, reffiles.HEADER)
            # The hash is taken of the entry as a reader of the file sees it
            # (an entry of context figures only is none: {}).
            stored = refprov.leaves(yamlfile.parse(contents[name], path))
            for (test, key), case_props in cases.items():
                where = refprov.where(key)
                entries = prov.setdefault(test, {})
                version = _version(
                    case_props, stored.get((test, where), {}), sessions, made, stack
                )
                entries[where] = [*refprov.versions(entries.get(where)), version]
            contents[prov_name] = reffiles.dump(prov)
            written.append(path)
        contents[sessions_name] = reffiles.dump(sessions)
        refstore.commit(directory, contents)
    return written


def demote_wide(directory, write=False):
    """Lines naming every band of the system directories under the root
    *directory* that is wider than ±100 % (references.widebands); with
    *write*, each is taken out of its reference file and kept as context in
    a new version of its provenance (one transaction per system directory),
    and a line names each file written. References written before the rule,
    or shipped, are brought under it so."""
    lines, written = [], []
    for system in refdir.systems(directory):
        folder = os.path.join(directory, system)
        if write:
            with refstore.locked(folder):
                lines += refstore.repair(folder)
                found, contents = _demoted(folder)
                if contents:
                    refstore.commit(folder, contents)
            written += [os.path.join(folder, n) for n in contents if '/' not in n]
        else:
            refstore.refuse_half_applied(folder)
            found, _ = _demoted(folder)
        lines += found
    return lines + [f'wrote {path}' for path in written]


def _demoted(folder):
    """(lines, new contents) of the files of the system directory *folder*
    without their bands wider than ±100 %."""
    lines, contents = [], {}
    sessions_name = os.path.join(PROVENANCE_DIR, refprov.SESSIONS_FILE)
    sessions = reffiles.load_provenance(os.path.join(folder, sessions_name))
    made = _now().isoformat(timespec='seconds')
    for path in sorted(glob.glob(os.path.join(folder, '*.yaml'))):
        name = os.path.basename(path)
        prov_name = os.path.join(PROVENANCE_DIR, name)
        refs = reffiles.load_references(path)
        prov = refprov.migrate(
            reffiles.load_provenance(os.path.join(folder, prov_name)), sessions
        )
        demoted = {}
        for test, index, key, leaf in list(refprov.entries(refs)):
            wide = {
                var: why
                for var, entry in leaf.items()
                if isinstance(entry, list) and len(entry) >= 3
                for why in [widebands.too_wide(var, refdata.unit_of(entry), entry)]
                if why
            }
            versions = refprov.versions((prov.get(test) or {}).get(refprov.where(key)))
            if wide and not versions:
                lines.append(
                    f'{path}: {test} > {refprov.where(key)}: no provenance: kept'
                )
                continue
            for var, why in wide.items():
                place = proposalview.place(_Place(os.path.basename(folder), index, key))
                short = proposalview.short_test(test, index, key)
                lines.append(f'{short} / {var} ({place}): context only: {why}')
                demoted.setdefault((test, key), {})[var] = (leaf[var], why)
            for var in wide:
                reffiles.nested_pop(refs, [test, *key, var])
        if not demoted:
            continue
        contents[name] = reffiles.dump(refs, reffiles.HEADER)
        stored = refprov.leaves(yamlfile.parse(contents[name], path))
        for (test, key), figures in demoted.items():
            where = refprov.where(key)
            versions = refprov.versions(prov[test][where])
            last = versions[-1]
            kept = dict(last.get('figures') or {})
            for var, (entry, why) in figures.items():
                kept[var] = {
                    **(kept.get(var) or {}),
                    'reference': entry,
                    refprov.CONTEXT_KEY: why,
                }
            leaf = stored.get((test, where), {})
            version = {
                **last,
                refprov.HASH_KEY: refprov.entry_hash(leaf),
                'made': made,
                'clusterbench': __version__,
                'figures': kept,
            }
            prov[test][where] = [*versions, version]
        contents[prov_name] = reffiles.dump(prov)
    if contents:
        contents[sessions_name] = reffiles.dump(sessions)
    return lines, contents


@dataclass
class _Place:
    """What proposalview.place reads of a Samples."""

    system: str
    index: tuple
    key: tuple


def _version(case_props, leaf, sessions, made, stack):
    """One version of the provenance of a reference entry (*made*: when and
    from which reports); the sessions it was made from get a record in
    *sessions* if they have none."""
    first = case_props[0].samples
    ids = sorted(first.sessions)
    found = {
        'nodes': sorted(first.nodes),
        'hardware': dict(first.facts),
        'identity': dict(first.identity)
        or {'source': 'absent', 'reason': 'the reports recorded none'},
        'stack': dict(stack or {}),
    }
    for sid in ids:
        sessions.setdefault(sid, dict(found))
    return {
        refprov.HASH_KEY: refprov.entry_hash(leaf),
        **made,
        'sessions': ids,
        **refprov.differs(found, sessions, ids),
        'clusterbench': __version__,
        'reframe': _reframe_version(),
        **_host_probe_entry(first),
        'figures': {
            p.samples.variable: {
                'reference': p.entry,
                'samples': len(p.samples.values),
                'median': _round(statistics.median(p.samples.values), 6),
                'spread_mad_rel': round(p.spread, 4),
                'sessions': len(p.samples.sessions),
                'session_medians': [
                    _round(stats.median(v), 6) for v in p.samples.per_session.values()
                ],
                'values': [_round(v, 6) for v in p.samples.values],
                **({refprov.CONTEXT_KEY: p.context} if p.context else {}),
            }
            for p in case_props
        },
    }


def _now():
    # SOURCE_DATE_EPOCH (reproducible-builds.org) fixes the date a provenance
    # records, so that two writes of one update are the same bytes.
    epoch = os.environ.get('SOURCE_DATE_EPOCH')
    utc = datetime.UTC
    if epoch and epoch.isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), utc)
    return datetime.datetime.now(utc)


def _reframe_version():
    # The installed distribution's version: importing ReFrame costs 0.4 s.
    try:
        return importlib.metadata.version('ReFrame-HPC')
    except importlib.metadata.PackageNotFoundError:
        return None

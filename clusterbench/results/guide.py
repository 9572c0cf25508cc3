"""A new machine is a guided state: what to do when no reference applies.

When not one figure of a session found a reference for its machine's
identity (its ``cpu_kind``), one line says so, names the identities the
reference directory does have references for and the command that makes
them (with the run's options: results.suggested); then, as context only and
never as a verdict, a few lines put each check's figures against the
references of the nearest known identity (ratio this run / that reference:
the median over the check's figures, and their range). A DISTURBED figure
counts as what the directory holds for it: a busy machine without
references is still told how to make them.
"""

import glob
import os
import statistics

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict, vocabulary
from clusterbench.references import directory as refdir
from clusterbench.references import lookup as reflookup
from clusterbench.references import validate as refdata
from clusterbench.results import suggested


def known_kinds(directory, system):
    """{cpu_kind: [(test, keys, subtree), ...]} of the references of *system*."""
    kinds = {}
    for path in _files(directory, system):
        for test, keys, kind, subtree in refdata.kind_entries(path):
            kinds.setdefault(str(kind), []).append((test, keys, subtree))
    return kinds


def _files(directory, system):
    """The reference files of *system* under *directory* (none for a name
    that is no system's)."""
    try:
        folder = refdir.system_directory(directory, system)
    except ClusterbenchError:
        return []
    return sorted(glob.glob(os.path.join(folder, '*.yaml')))


def _parts(kind):
    return (kind or '').split('-')


def nearest(kind, kinds):
    """The known kind most like *kind*: same vendor and family, then same
    vendor, then any; the one with the most references among equals."""

    def likeness(other):
        mine, theirs = _parts(kind), _parts(other)
        same = 0
        for a, b in zip(mine[:2], theirs[:2]):
            if a != b:
                break
            same += 1
        return (same, len(kinds[other]))

    return max(kinds, key=likeness) if kinds else None


def _leaves(tree, depth):
    """(path, {figure: entry}) of the subtree's levels *depth* below."""
    if depth == 0:
        yield (), tree
        return
    for key, sub in tree.items() if isinstance(tree, dict) else ():
        for path, leaf in _leaves(sub, depth - 1):
            yield (key, *path), leaf


def _reference(case, entries, variable, index_of):
    """The reference value of *variable* for *case* among *entries* of the
    nearest kind: the entry whose other index values match the case best."""
    best, score = None, -1
    for test, keys, subtree in entries:
        if test != case['name'].split()[0]:
            continue
        index = index_of.get(test) or []
        below = index[len(keys) :]
        for path, leaf in _leaves(subtree, len(below)):
            entry = leaf.get(variable) if isinstance(leaf, dict) else None
            if isinstance(entry, list) and entry and entry[0] == '$xfail':
                entry = entry[2]
            if not isinstance(entry, list) or not entry:
                continue
            wanted = [reflookup.index_value(case, k) for k in index[: len(keys) - 1]]
            wanted += [reflookup.index_value(case, k) for k in below]
            have = [*keys[1:], *path]
            matched = sum(str(a) == str(b) for a, b in zip(wanted, have))
            if matched > score:
                best, score = entry[0], matched
    return best


def _indexes(directory, system):
    found = {}
    for path in _files(directory, system):
        for test, body in (reflookup.load_file(path) or {}).items():
            if isinstance(body, dict) and body.get('$index'):
                found[test] = list(body['$index'])
    return found


def lines(judged, cases, directory, options=None):
    """The guidance for a session none of whose figures found a reference
    (``[]`` when one did): one line, then the context of the nearest kind.
    *options* (results.suggested.Options): the run's, which the command that
    makes the references repeats."""
    directory = directory or refdir.resolve(None)
    if not judged or _any_reference(judged, cases, directory):
        return []
    measured = {(j.test, j.system, j.partition, j.environ) for j in judged}
    cases = [c for c in cases if _ident(c) in measured]
    systems = sorted({c['system'] for c in cases})
    mine = sorted({str(_kind(c)) for c in cases if _kind(c) not in (None, 'unknown')})
    system = systems[0] if systems else 'local'
    kinds = known_kinds(directory, system)
    command = suggested.baseline(options or suggested.of(system, references=directory))
    who = ', '.join(mine) or 'this machine'
    if not kinds:
        return [f'no references for {who} in {directory}: make them with: {command}']
    if mine and set(mine) <= set(kinds):
        return [
            f'no figure of this run found a reference, although {directory} has '
            f'references for {who}: they were made for other tests, parameters '
            f'or partitions (`clusterbench references show` lists them); make '
            f'these with: {command}'
        ]
    out = [
        f'no references for {who} in {directory} (there are for '
        f'{", ".join(sorted(kinds))}): make them with: {command}'
    ]
    other = nearest(mine[0] if mine else '', kinds)
    regular = [j for j in judged if not j.disturbed]
    ratios = _ratios(regular, cases, kinds[other], _indexes(directory, system))
    if ratios:
        out.append(
            f'context, not a verdict: this run against the references of '
            f'{other} (x1.2: 20 % better here; the median of each check, range):'
        )
        width = max(len(test) for test in ratios)
        for test, values in ratios.items():
            out.append(
                f'  {test:<{width}}  x{statistics.median(values):.2f} '
                f'({min(values):.2f} .. {max(values):.2f}, {len(values)} figures)'
            )
    return out


def _any_reference(judged, cases, directory):
    """Whether a figure found a reference of this machine in *directory*.

    A portable figure's band, or a limit the site config sets (a fabric's
    acceptance figures), is none: a new machine whose HPL passes its band
    is still told how to make its references. A figure judged against a
    reference of a test case this cannot trace counts as found; a DISTURBED
    figure counts as what *directory* holds for its test case.
    """
    by_ident = {_ident(c): c for c in cases}
    cache = {}
    for j in judged:
        if j.band or (j.verdict == verdict.NO_REFERENCE and not j.disturbed):
            continue
        case = by_ident.get((j.test, j.system, j.partition, j.environ))
        if case is None:
            if not j.disturbed or j.ref is not None:
                return True
            continue
        try:
            found = reflookup.references_for(case, directory, cache)
        except ClusterbenchError:
            return True  # a file it cannot read is no new machine: not guided
        if j.variable in found:
            return True
    return False


def _kind(case):
    return case.get('cpu_kind') or (case.get('machine_identity') or {}).get('cpu_kind')


def _ident(case):
    return (case['name'], case['system'], case['partition'], case['environ'])


def _ratios(judged, cases, entries, index_of):
    """{check: [how many times better here than the reference, ...]}: a
    rate's ratio, a time's inverse (a figure with no direction is left out)."""
    by_ident = {_ident(c): c for c in cases}
    ratios = {}
    for j in judged:
        case = by_ident.get((j.test, j.system, j.partition, j.environ))
        better = vocabulary.direction(j.variable, j.unit)
        if case is None or better is None or vocabulary.is_share(j.variable, j.unit):
            continue
        ref = _reference(case, entries, j.variable, index_of)
        if isinstance(ref, (int, float)) and ref > 0 and j.value > 0:
            ratio = j.value / ref if better == vocabulary.HIGHER else ref / j.value
            ratios.setdefault(j.test.split()[0], []).append(ratio)
    return ratios

"""Provenance that matches its reference: every provenance entry records a hash
of the reference entry it describes, and ``references check`` compares them.

A reference entry is one leaf of a reference file: the figures of one test at
one full ``$index`` key, e.g. ``HPCCCheck > local:default > gnu-openmpi > ...``.
Its provenance is ``provenance/<file>`` > test > the key joined by ``/``: the
list of its versions, oldest first (an update appends one, so a re-record
adds lines and changes none). A version names the sessions it was made from
and holds its own samples; what a session ran on (nodes, hardware facts,
identity, software stack) is recorded once, in ``provenance/sessions.yaml``
keyed by session id. A version whose facts differ from its first session's
record (another programming environment's MPI, an identity assigned at a
migration) keeps the difference (``differs``). See docs/provenance.md.

The format before (each entry one dict with the facts inline and its earlier
versions under ``history``, newest first) is still read, and the next update
of a file writes it in this format (:func:`migrate`).
"""

import glob
import json
import os
import reprlib

from clusterbench.references import yamlfile
from clusterbench.references.store import sha256

PROVENANCE_DIR = 'provenance'
#: The records of the sessions, in PROVENANCE_DIR (no reference file has this name).
SESSIONS_FILE = 'sessions.yaml'
HASH_KEY = 'entry_sha256'
#: What a session record holds, and what a version of the old format held inline.
FACTS = ('nodes', 'hardware', 'identity', 'stack')
#: The facts of a version where they differ from its first session's record
#: (null: a fact the version did not record).
DIFFERS = 'differs'
#: Beside a figure of a version: why its band was written into no reference
#: file (references.widebands); its ``reference`` is the band it would be.
CONTEXT_KEY = 'context_only'


def entry_hash(leaf):
    """Hash of one reference entry ({figure: [ref, lower, upper, unit]})."""
    text = json.dumps(leaf, sort_keys=True, separators=(',', ':'), default=str)
    return sha256(text.encode())


def where(key):
    return '/'.join(map(str, key))


def entries(refs):
    """(test, $index, key, leaf) of every entry of a parsed reference file."""
    # A file that is no mapping has no entries (the validator names it).
    for test, body in (refs if isinstance(refs, dict) else {}).items():
        if not isinstance(body, dict):
            continue
        index = tuple(body.get('$index') or ['$partition'])
        levels = [((), {k: v for k, v in body.items() if k != '$index'})]
        for _ in index:
            levels = [
                ((*key, k), v)
                for key, level in levels
                if isinstance(level, dict)
                for k, v in level.items()
            ]
        for key, leaf in levels:
            yield test, index, key, leaf


def leaves(refs):
    """{(test, joined key): leaf} of a parsed reference file."""
    return {(test, where(key)): leaf for test, _, key, leaf in entries(refs)}


def load(path):
    """A parsed YAML file: None when it is missing, {} when it is empty; a
    malformed one is a one-line ReferenceFileError naming its line."""
    if not os.path.exists(path):
        return None
    return yamlfile.load_any(path) or {}


def records(prov):
    """The entries of a parsed provenance file: {test: {key: entry}}, without
    its retired records (``$retired``: references taken out of use, kept whole
    with their provenance and the reason)."""
    return {
        test: entries
        for test, entries in (prov or {}).items()
        if not str(test).startswith('$')
    }


def versions(entry):
    """The versions of one provenance entry, oldest first (the current one
    last); an entry of the old format is converted."""
    if isinstance(entry, list):
        return entry
    if not isinstance(entry, dict):
        return []
    history = entry.get('history')
    history = history if isinstance(history, list) else []
    current = {k: v for k, v in entry.items() if k != 'history'}
    return [*reversed(history), current]


def current(entry):
    """The version of a provenance entry that describes the reference in use."""
    found = versions(entry)
    return found[-1] if found and isinstance(found[-1], dict) else None


def figures(entry):
    """{figure: what its reference in use was made from} (reference,
    samples, median, session_medians, values) of a provenance entry of
    either format; {} when it records none."""
    found = (current(entry) or {}).get('figures')
    return found if _is(found) else {}


def context_only(entry):
    """{figure: why} of the figures that the version in use of a provenance
    entry keeps as context only (no band in the reference file)."""
    return {
        name: str(fig[CONTEXT_KEY])
        for name, fig in figures(entry).items()
        if _is(fig) and fig.get(CONTEXT_KEY)
    }


def in_use(directory):
    """(file name, test, joined key, entry) of every provenance entry of the
    reference directory *directory*, by file (retired records and the
    sessions' records are not entries)."""
    pattern = os.path.join(directory, PROVENANCE_DIR, '*.yaml')
    for path in sorted(glob.glob(pattern)):
        name = os.path.basename(path)
        if name == SESSIONS_FILE:
            continue
        for test, entries in records(load(path)).items():
            if _is(entries):
                for key, entry in entries.items():
                    yield name, test, key, entry


def facts(version, sessions):
    """The facts recorded with one *version* ({nodes, hardware, identity,
    stack}): its first session's record in *sessions*, with what differs."""
    if _inline(version):
        return {k: version[k] for k in FACTS if k in version}
    ids = _session_ids(version) or [None]
    record = sessions.get(ids[0]) if isinstance(sessions, dict) else None
    base = {k: record[k] for k in FACTS if k in record} if _is(record) else {}
    return _merged(base, version.get(DIFFERS) or {})


def differs(found, sessions, ids):
    """``{differs: ...}`` for a version made from sessions *ids* that recorded
    the facts *found*, or {} when its first session's record holds them."""
    diff = _difference(facts({'sessions': ids}, sessions), found)
    return {DIFFERS: diff} if diff else {}


def migrate(prov, sessions):
    """*prov* (a parsed provenance file of either format) in this format; the
    facts of its versions go into *sessions* (changed in place): a session
    new there gets the facts that most versions naming it recorded (then the
    latest, then the first)."""
    out, inline = {}, []
    for test, entries in (prov or {}).items():
        if str(test).startswith('$') or not _is(entries):
            out[test] = entries  # retired records are kept whole
            continue
        out[test] = {}
        for key, entry in entries.items():
            found = versions(entry)
            inline += [v for v in found if _is(v) and _inline(v) and _session_ids(v)]
            out[test][key] = found
    # Per session: how many versions recorded each set of facts, the latest
    # date and the first place it was seen (the order of preference).
    rank, first = {}, {}
    for place, version in enumerate(inline):
        found = facts(version, {})
        text = json.dumps(found, sort_keys=True, default=str)
        first.setdefault(text, found)
        for sid in _session_ids(version):
            if sid not in sessions:
                count, made, seen = rank.setdefault(sid, {}).get(text, (0, '', -place))
                rank[sid][text] = (count + 1, max(made, str(version.get('made'))), seen)
    for sid, found in rank.items():
        sessions[sid] = first[max(found, key=found.get)]
    for entries in records(out).values():
        if _is(entries):
            for key, found in entries.items():
                entries[key] = [_converted(v, sessions) for v in found]
    return out


def _converted(version, sessions):
    if not (_is(version) and _inline(version) and _session_ids(version)):
        return version
    found = facts(version, {})
    rest = {k: v for k, v in version.items() if k not in FACTS}
    first = {
        k: rest.pop(k) for k in (HASH_KEY, 'made', 'reports', 'sessions') if k in rest
    }
    return {**first, **differs(found, sessions, _session_ids(version)), **rest}


def _session_ids(version):
    """The session ids a version names ([] unless a list of ids: a
    malformed one is named by `references check`)."""
    ids = version.get('sessions') if _is(version) else None
    if not isinstance(ids, list) or not all(isinstance(i, (str, int)) for i in ids):
        return []
    return ids


def _is(value):
    return isinstance(value, dict)


def _inline(version):
    return any(k in version for k in FACTS)


def _difference(base, new):
    """What turns *base* into *new* under :func:`_merged`."""
    diff = {}
    for key in [*new, *(k for k in base if k not in new)]:
        if key not in new:
            diff[key] = None
        elif key not in base:
            diff[key] = new[key]
        elif _is(base[key]) and _is(new[key]):
            sub = _difference(base[key], new[key])
            if sub:
                diff[key] = sub
        elif base[key] != new[key] or new[key] is None:
            diff[key] = new[key]
    return diff


def _merged(base, diff):
    merged = dict(base)
    for key, value in diff.items():
        if value is None:
            merged.pop(key, None)
        elif _is(value) and _is(merged.get(key)):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def sessions_path(directory):
    return os.path.join(directory, PROVENANCE_DIR, SESSIONS_FILE)


def inconsistencies(directory):
    """Lines naming every reference entry whose provenance is missing or
    does not match it, every provenance entry that describes nothing, and
    every version that names a session without a record."""
    problems = []
    names = {
        os.path.basename(p)
        for pattern in ('*.yaml', os.path.join(PROVENANCE_DIR, '*.yaml'))
        for p in glob.glob(os.path.join(directory, pattern))
    } - {SESSIONS_FILE}
    sessions_file = sessions_path(directory)
    sessions = load(sessions_file) or {}
    for file_name in sorted(names):
        path = os.path.join(directory, file_name)
        prov_path = os.path.join(directory, PROVENANCE_DIR, file_name)
        found = leaves(load(path))
        prov = load(prov_path)
        if prov is None:
            if found:
                problems.append(f'{path}: {len(found)} entries, no {prov_path}')
            continue
        recorded = {
            (test, key): entry
            for test, entries in records(prov).items()
            if isinstance(entries, dict)
            for key, entry in entries.items()
        }
        for (test, key), leaf in found.items():
            entry = current(recorded.get((test, key)))
            name = f'{test} > {key}'
            if (test, key) not in recorded:
                problems.append(f'{path}: {name}: no provenance in {prov_path}')
            elif entry is None or HASH_KEY not in entry:
                problems.append(f'{prov_path}: {name}: no {HASH_KEY} of its reference')
            elif entry[HASH_KEY] != entry_hash(leaf):
                problems.append(
                    f'{prov_path}: {name}: does not match the reference entry in '
                    f'{path} (the reference changed without its provenance)'
                )
        for test, key in sorted(set(recorded) - set(found), key=str):
            entry = recorded[(test, key)]
            # Its figures are all context only: the file has no entry.
            empty = (current(entry) or {}).get(HASH_KEY) == entry_hash({})
            if empty and context_only(entry):
                continue
            problems.append(
                f'{prov_path}: {test} > {key}: describes no reference entry in {path}'
            )
        for (test, key), entry in sorted(recorded.items(), key=lambda i: str(i[0])):
            problem = _unrecorded(entry, sessions, sessions_file)
            if problem:
                problems.append(f'{prov_path}: {test} > {key}: {problem}')
    return problems


def _unrecorded(entry, sessions, sessions_file):
    """What is wrong with the sessions the versions of *entry* name, or None."""
    for version in versions(entry):
        if not _is(version) or _inline(version):
            continue
        if not _session_ids(version):
            ids = reprlib.repr(version.get('sessions'))
            return f'sessions {ids}: not a list of session ids'
        for sid in version['sessions']:
            if not isinstance(sessions, dict) or sid not in sessions:
                return f'session {sid} has no record in {sessions_file}'
    return None

"""How old the references are that an executive row was judged against:
the day each was made, from its provenance (references.provenance) in the
reference directory in use (references.directory.resolve)."""

import datetime
import os

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import directory as refdir
from clusterbench.references import provenance


def of_row(files, references, system, partition, now=None):
    """'3-5 days' since the references in the files *files* (names under the
    system's directory) of *system*:*partition* were made, or why not."""
    if not files:
        return 'no reference'
    made = []
    try:
        folder = refdir.system_directory(refdir.resolve(references), system)
        for name in sorted(files):
            path = os.path.join(folder, provenance.PROVENANCE_DIR, name)
            made += _made(provenance.load(path), f'{system}:{partition}')
    except (ClusterbenchError, OSError, ValueError, TypeError):
        return 'unknown (provenance unreadable)'
    if not made:
        return 'unknown (no provenance)'
    now = now or datetime.datetime.now(datetime.UTC)
    ages = sorted((now - m).days for m in made)
    if ages[0] == ages[-1]:
        return f'{ages[0]} day' + 's' * (ages[0] != 1)
    return f'{ages[0]}-{ages[-1]} days'


def _made(prov, where):
    """When the version in use of each entry of the parsed provenance *prov*
    was made; those of the partition *where* when it has any (an entry's
    key begins with its ``$partition``), else all of them."""
    found, mine = [], []
    for entries in provenance.records(prov).values():
        for key, entry in (entries if isinstance(entries, dict) else {}).items():
            when = (provenance.current(entry) or {}).get('made')
            if not when:
                continue
            stamp = datetime.datetime.fromisoformat(str(when))
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=datetime.UTC)
            found.append(stamp)
            if str(key).split('/')[0] == where:
                mine.append(stamp)
    return mine or found

"""One rule for DISTURBED samples: left out of every figure, and said.

A test case whose run broke its conditions' thresholds
(clusterbench.noisyhost.conditions) records what it broke in ``disturbed``,
e.g. ``"steal 18 %, ranks' CPU share 71 %"``. Its figures are no
measurement of the machine: `references update`, `baseline`, `trend` (and
the report and `ab`) leave them out of everything they pool, and say how
many they left out, one line per kind of disturbance: never silence.
"""

from dataclasses import dataclass, field

#: The kinds of disturbance a run can record, as their text begins
#: (noisyhost.conditions.disturbed, checks/plugins/runconditions.py). A part
#: of the text that begins with none of them continues the one before it
#: (``host probe gather -18 %, copy -12 %``).
KINDS = ('steal', "ranks' CPU share", 'other processes', 'host probe')


def kinds(text):
    """{kind: what was recorded for it} of one ``disturbed`` text, in order;
    a text naming no known kind is a kind of its own (a newer release may
    record more)."""
    found = {}
    last = None
    for part in (p.strip() for p in (text or '').split(',')):
        if not part:
            continue
        kind = next((k for k in KINDS if part.startswith(k)), None)
        if kind is None and last is not None:
            found[last] += f', {part}'
            continue
        kind = kind or part.rstrip('0123456789.%- ') or part
        found[kind] = f'{found[kind]}, {part}' if kind in found else part
        last = kind
    return found


@dataclass
class _Kind:
    samples: int = 0
    sessions: set = field(default_factory=set)
    example: str = ''


@dataclass
class LeftOut:
    """The DISTURBED samples a command left out, by kind of disturbance."""

    by_kind: dict = field(default_factory=dict)
    samples: int = 0
    sessions: set = field(default_factory=set)

    def add(self, text, session, samples=1):
        """Count *samples* of *session* left out for the disturbance *text*."""
        self.samples += samples
        self.sessions.add(session)
        for kind, what in kinds(text).items():
            entry = self.by_kind.setdefault(kind, _Kind())
            entry.samples += samples
            entry.sessions.add(session)
            entry.example = entry.example or what

    def __bool__(self):
        return bool(self.samples)

    def lines(self):
        """One line per kind of disturbance; [] when nothing was left out."""
        return [
            f'left out {_count(k.samples, "DISTURBED sample")} of '
            f'{_count(len(k.sessions), "session")}: {kind} (e.g. {k.example})'
            for kind, k in sorted(self.by_kind.items())
        ]


def _count(n, what):
    return f'{n} {what}{"s" * (n != 1)}'

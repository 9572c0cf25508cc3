"""`clusterbench baseline`: the references of a new system or CPU kind, from
several sessions spaced and interleaved in time.

One bad quarter hour must not make the baseline: the suite runs as whole
rounds (one `clusterbench run` session each, never one check N times back
to back), a few minutes apart, each round in the other order than the one
before (ReFrame's ``--exec-order`` ``name``, then ``rname``: a check that
ran last runs first next time). Sessions recorded earlier count too
(``--from``). DISTURBED samples are left out and named (judging.disturbed),
the proposal's tolerances have the floor of their kind of figure
(references.floors), and fewer than :data:`MIN_SESSIONS` undisturbed
sessions behind any figure write nothing unless forced.
"""

import os
import time
from dataclasses import dataclass, field

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import disturbed
from clusterbench.references import floors, proposalview
from clusterbench.references import update as refupdate
from clusterbench.results import replay, runreport, samples

MIN_SESSIONS = refupdate.MIN_SESSIONS
#: The order of the checks in round 1, 2, ... (repeated).
ORDERS = ('name', 'rname')


def round_options(number, extra=()):
    """ReFrame options of round *number* (0-based): its order of the checks,
    unless *extra* imposes one."""
    if any(str(a).startswith('--exec-order') for a in extra):
        return list(extra)
    return [f'--exec-order={ORDERS[number % len(ORDERS)]}', *extra]


def record(rounds, spacing_minutes, run_one, say=print, sleep=time.sleep):
    """Run *rounds* sessions, *spacing_minutes* apart: ``run_one(number)``
    runs round *number* (0-based)."""
    for number in range(rounds):
        if number and spacing_minutes > 0:
            say(
                f'baseline: waiting {spacing_minutes:g} min before round '
                f'{number + 1} of {rounds}'
            )
            sleep(spacing_minutes * 60)
        say(f'baseline: round {number + 1} of {rounds}')
        run_one(number)


def reports_of(paths):
    """(report paths, lines) of the run reports or session directories
    *paths*: one report per session (a session given twice counts once)."""
    found, seen, notes = [], {}, []
    for path in paths:
        report = replay.find_report(path)
        uuid = runreport.load(report)['session_info'].get('uuid') or os.path.realpath(
            report
        )
        if uuid in seen:
            notes.append(f'{report}: the same session as {seen[uuid]}: counted once')
            continue
        seen[uuid] = report
        found.append(report)
    return found, notes


@dataclass
class Baseline:
    """What the sessions propose."""

    reports: list
    proposals: list
    left_out: disturbed.LeftOut = field(default_factory=disturbed.LeftOut)

    @property
    def sessions(self):
        """The sessions with at least one undisturbed, verified figure."""
        return {s for p in self.proposals for s in p.samples.sessions}

    def short(self, minimum=MIN_SESSIONS):
        """The proposals that fewer than *minimum* sessions back."""
        return [p for p in self.proposals if len(p.samples.sessions) < minimum]

    def complete(self, minimum=MIN_SESSIONS):
        """This baseline without the proposals that fewer than *minimum*
        sessions back (they stay without a reference: visible, not guessed)."""
        kept = [p for p in self.proposals if len(p.samples.sessions) >= minimum]
        return Baseline(self.reports, kept, self.left_out)


def fewest_sessions(reports):
    """The fewest undisturbed sessions of *reports* behind any figure (0
    when no figure has one)."""
    if not reports:
        return 0
    try:
        groups = samples.collect(reports)
    except ClusterbenchError:
        return 0
    return min(len(g.sessions) for g in groups)


def propose(reports, k=3.0, one_sided=False):
    """The :class:`Baseline` of *reports*: references with the floor of
    their kind of figure (margin beyond the farthest session: the old floor)."""
    left_out = disturbed.LeftOut()
    groups = samples.collect(reports, left_out)
    proposals = refupdate.propose(
        groups,
        floor=floors.MINIMUM,
        k=k,
        one_sided=one_sided,
        floor_for=floors.floor_for,
    )
    return Baseline(reports, proposals, left_out)


def refusal(baseline, system, minimum=MIN_SESSIONS):
    """'' when every figure has *minimum* undisturbed sessions, else the one
    line that says how many there are and how to proceed."""
    short = baseline.short(minimum)
    if not short:
        return ''
    fewest = min(len(p.samples.sessions) for p in short)
    example = next(p for p in short if len(p.samples.sessions) == fewest)
    have = len(baseline.sessions)
    dirs = ' '.join(sorted({os.path.dirname(r) or '.' for r in baseline.reports}))
    what = (
        f'{len(short)} of {len(baseline.proposals)} figures have fewer than '
        f'{minimum} undisturbed sessions (fewest {fewest}: '
        f'{proposalview.short_name(example.samples)}; {have} in all)'
    )
    left = f' ({baseline.left_out.samples} DISTURBED samples left out)'
    return (
        f'baseline: {what}{left if baseline.left_out else ""}; {minimum} are '
        f'needed: record more with `clusterbench baseline --system {system} '
        f'--sessions {minimum - fewest} --from {dirs}`, write the others alone '
        f'with --complete-only, or write these too with --force'
    )

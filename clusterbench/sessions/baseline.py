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
sessions behind any figure write nothing unless forced. `references update`
follows the same rule (:func:`shortfall`, :func:`floor_when_short`), and both
name the bands they write that a regression stays inside
(:func:`wide_lines`, in the words of `references check`).
"""

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field

from clusterbench.core.controlchars import escaped
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import disturbed, verdict
from clusterbench.references import directory as refdir
from clusterbench.references import floors, proposalview
from clusterbench.references import update as refupdate
from clusterbench.references import validate as refdata
from clusterbench.results import replay, runreport, samples, suggested

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
    *paths*: one report per session (a session given twice counts once).

    A session is its uuid; a report without one (older ReFrame, or edited)
    is its test cases: copies of one report are one session, or three
    copies would pass as the three sessions a baseline needs."""
    found, seen, notes = [], {}, []
    for path in paths:
        report = replay.find_report(path)
        data = runreport.load(report)
        uuid = data['session_info'].get('uuid')
        session = uuid or ('cases', _cases_hash(data))
        if session in seen:
            why = 'the same session as' if uuid else 'the same test cases as'
            also = '' if uuid else ' (no session uuid)'
            notes.append(f'{report}: {why} {seen[session]}{also}: counted once')
            continue
        seen[session] = report
        found.append(report)
    return found, notes


def _cases_hash(data):
    """A hash of the test cases of a run report, whatever their order of keys."""
    cases = [case for run in data['runs'] for case in run.get('testcases', [])]
    text = json.dumps(cases, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


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
    try:
        groups = samples.collect(reports, left_out)
    except samples.NoVerifiedFigure:
        if not left_out:
            raise
        # Every figure DISTURBED: a refusal that says what to do (refusal()).
        return Baseline(reports, [], left_out)
    proposals = refupdate.propose(
        groups,
        floor=floors.MINIMUM,
        k=k,
        one_sided=one_sided,
        floor_for=floors.floor_for,
    )
    return Baseline(reports, proposals, left_out)


def floor_when_short(group, minimum=MIN_SESSIONS):
    """``(floor, kind)`` of a group of samples (references.update.propose's
    *floor_for*) when a figure's floor is not its kind's for all: its kind's
    (references.floors), as a baseline gives every figure, when fewer than
    *minimum* sessions back it (a band from one session cannot know how much
    sessions differ); else none, and the floor asked for stands."""
    if len(group.sessions) < minimum:
        return floors.floor_for(group)
    return 0.0, ''


def shortfall(baseline, minimum=MIN_SESSIONS):
    """'' when every figure has *minimum* undisturbed sessions, else how
    many figures have fewer, the fewest (and a figure with so few), and the
    DISTURBED samples left out: the rule of `baseline` and of `references
    update`, which each say how to proceed."""
    short = baseline.short(minimum)
    if not short:
        return ''
    fewest = min(len(p.samples.sessions) for p in short)
    example = next(p for p in short if len(p.samples.sessions) == fewest)
    have = len(baseline.sessions)
    what = (
        f'{len(short)} of {len(baseline.proposals)} figures have fewer than '
        f'{minimum} undisturbed sessions (fewest {fewest}: '
        f'{proposalview.short_name(example.samples)}; {have} in all)'
    )
    left = f' ({baseline.left_out.samples} DISTURBED samples left out)'
    return what + (left if baseline.left_out else '')


def refusal(baseline, system, minimum=MIN_SESSIONS, options=None):
    """'' when every figure has *minimum* undisturbed sessions, else the one
    line that says how many there are and how to proceed: the command to
    run, with *options* (results.suggested.Options: the baseline's own)."""
    options = options or suggested.of(system)
    if not baseline.proposals and baseline.left_out:
        return all_disturbed(baseline, options)
    what = shortfall(baseline, minimum)
    if not what:
        return ''
    fewest = min(len(p.samples.sessions) for p in baseline.short(minimum))
    dirs = sorted({os.path.dirname(r) or '.' for r in baseline.reports})
    more = suggested.baseline(options, '--sessions', minimum - fewest, '--from', *dirs)
    return (
        f'baseline: {what}; {minimum} are needed: record more with `{more}`, '
        'write the others alone with --complete-only, or write these too with '
        '--force'
    )


#: Seconds `--wait-quiet` is suggested with after DISTURBED sessions.
QUIET_WAIT = 120


def all_disturbed(baseline, options):
    """The refusal of sessions all of whose figures were DISTURBED: how many,
    why, and the two ways on (docs/noisy-host.md)."""
    left = baseline.left_out
    count = len(baseline.reports)
    sessions = f'{count} session{"s" * (count != 1)}'
    why = ', '.join(sorted(left.by_kind))
    quiet = max(QUIET_WAIT, options.wait_quiet)
    again = suggested.baseline(options, wait_quiet=quiet)
    return (
        f'baseline: every figure of the {sessions} was DISTURBED ({why}; '
        f'{left.samples} samples left out, above): nothing was written; record '
        f'them when the machine is quiet: `{again}` '
        '(before each test, waits until the machine has been quiet for 3 s), '
        'or, on a machine that never is, add `-S judge_conditions=false` after '
        '`--` (the run conditions are then not judged: whatever load the '
        'sessions meet goes into the bands)'
    )


def wide_lines(proposals, root, threshold=verdict.DETECTION_THRESHOLD):
    """What `references check` warns of the bands just written under *root*
    that a regression of *threshold* stays inside, in its words, and their
    count ([] when none is)."""
    wanted = {}
    for prop in proposals:
        s = prop.samples
        if prop.context:
            continue  # written as context only, in no reference file
        folder = refdir.system_directory(root, s.system)
        path = os.path.join(folder, s.reference_file)
        keys = ' > '.join(str(k) for k in (s.test, *s.key, s.variable))
        pattern = rf'{re.escape(path)}:\d+: {re.escape(keys)}: '
        wanted.setdefault(folder, set()).add(pattern)
    found = []
    for folder, patterns in sorted(wanted.items()):
        written = re.compile('|'.join(sorted(patterns)))
        found += [
            f'warning: {escaped(line)}'
            for line in refdata.wide_tolerances(folder, threshold)
            if written.match(line)
        ]
    if found:
        found.append(
            f'{len(found)} figure(s) written with a tolerance above '
            f'{threshold * 100:.0f} % (`references check` warns of them too): '
            'a regression that small stays inside their bands'
        )
    return found

"""`clusterbench ab`: two configurations measured in turn (ABBA, BAAB) in one session.

Each leg is one ReFrame session of ``clusterbench run``'s runner (the same
command line, lock, environment and results root) in a directory of its own
under the A/B session: ``<results>/<system>/<stamp>/01-A/report.json``,
``02-B/``, ``03-B/``, ``04-A/``, ... ``ab.json`` beside them records the two
configurations and every leg as it ends, so that an interrupted session
keeps what it measured and any session can be judged again from its stored
reports (``clusterbench ab --judge DIR``). A block with a DISTURBED leg is
measured again at the end, and with a resolution asked for, blocks go on
until every figure resolves it (judging.paired.more_blocks).
"""

import math
import os
import re
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field

from clusterbench.core import jsontext
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import paired, selection
from clusterbench.results import runreport
from clusterbench.sessions import abplan, runner

PLAN = 'ab.json'


@dataclass
class Arm:
    """One configuration: the system (or system:partition) and the ReFrame
    options that make it what it is (``-p ENV``, ``-S name=value``, ...)."""

    system: str
    args: list


@dataclass
class Blocks:
    """How many blocks a session runs: *repeats* without a DISTURBED leg, and
    with *resolve* (a fraction) until every figure's interval at
    *confidence* is at most that wide; never more than *most*
    (paired.block_limit by default). The one loop of `clusterbench ab` and
    of evaluation/ab_study.py: ``while blocks.due(): ...; blocks.ended(...)``.
    """

    repeats: int
    most: int = None
    resolve: float = None
    confidence: float = paired.CONFIDENCE
    run: int = 0
    disturbed: int = 0
    #: The rows (paired.judge) not resolved after the last block.
    wide: list = field(default_factory=list)

    def __post_init__(self):
        self.most = self.most or paired.block_limit(self.repeats, self.resolve)

    def fresh(self):
        """The same policy with no block run yet (one per session)."""
        return Blocks(self.repeats, self.most, self.resolve, self.confidence)

    def due(self):
        resolved = not self.wide
        return paired.more_blocks(
            self.repeats, self.run, self.disturbed, self.most, resolved
        )

    def ended(self, disturbed, samples):
        """Count a block (*disturbed* if a leg of it was); *samples* gives
        every sample so far, read only when a resolution is asked for."""
        self.run += 1
        self.disturbed += bool(disturbed)
        if self.resolve and self.run - self.disturbed >= self.repeats:
            rows = paired.judge(samples(), self.confidence)
            self.wide = paired.unresolved(rows, self.resolve)


def run(
    config, checks, arms, results, references, blocks, *, extra=(), out=None, wait=True
):
    """Run *arms* (A, B) in *blocks* (Blocks), ReFrame's output to *out*
    (stdout), waiting for another session's lock unless not *wait*; return
    the session directory."""
    out = out or sys.stdout
    systems = [arm.system for arm in arms.values()]
    runner.check_inputs(config, checks, systems, references)
    _check_environs(config, arms, extra)
    launch = runner.start(config, arms[paired.A].system, results, references, out, wait)
    prefix, lock = launch.prefix, launch.lock
    plan = {
        'config': config,
        'checks': checks,
        'repeats': blocks.repeats,
        'max_blocks': blocks.most,
        'resolve': blocks.resolve,
        'confidence': blocks.confidence,
        'extra': list(extra),
        'arms': {name: asdict(arm) for name, arm in arms.items()},
        'legs': [],
    }
    try:
        _save(prefix, plan)
        _say(out, _planned(blocks))
        started = time.monotonic()
        while blocks.due():
            block = blocks.run
            broke = [
                _leg(config, checks, arms, extra, launch, plan, block, name, out)
                for name in paired.block_order(block)
            ]
            broke = [text for text in broke if text]
            blocks.ended(broke, lambda: load(prefix)[1])
            if blocks.run == 1:
                _say(out, _time_left(blocks, time.monotonic() - started))
            if broke:
                to_go = max(blocks.repeats - (blocks.run - blocks.disturbed), 0)
                _say(out, f'block {blocks.run}: a DISTURBED leg ({broke[0]}); '
                     f'{to_go} undisturbed blocks to go, at most {blocks.most} '
                     'blocks in all')  # fmt: skip
            if blocks.wide and blocks.run < blocks.most:
                _say(out, f'after block {blocks.run}: {_unresolved(blocks)}; at most '
                     f'{blocks.most} blocks in all')  # fmt: skip
    finally:
        if lock:
            lock.release()
    return prefix


def _check_environs(config, arms, extra):
    """One line, before any leg runs, for an arm whose ``-p`` matches no
    programming environment of its system: every leg of that arm would run
    nothing, and the session would judge A against nothing."""
    for name, arm in arms.items():
        options = selection.selecting_options([*extra, *arm.args])
        patterns = [value for option, value in options if option == '-p']
        partitions = runner._partitions(config, arm.system)
        environs = sorted({e for p in partitions for e in p.get('environs', [])})
        if not patterns or not environs:
            continue  # ReFrame says what it could not load
        try:
            matched = [e for e in environs if any(re.match(p, e) for p in patterns)]
        except re.error as err:
            raise ClusterbenchError(f'-p: not a regular expression: {err}') from None
        if not matched:
            raise ClusterbenchError(
                f'-p {" -p ".join(patterns)} (arm {name}): no programming '
                f'environment of {arm.system} matches (it has {", ".join(environs)}); '
                'no leg ran'
            )


def _planned(blocks):
    """What the session runs, said before the first leg: 'A/B: 8 blocks of
    4 legs (32 ReFrame sessions), at most 16 blocks ...'."""
    legs = len(paired.BLOCK_ORDER)
    more = (
        'until every figure resolves the change asked for'
        if blocks.resolve
        else 'if blocks with a DISTURBED leg are measured again'
    )
    return (
        f'A/B: {blocks.repeats} blocks of {legs} legs ({blocks.repeats * legs} '
        f'ReFrame sessions), at most {blocks.most} blocks {more}; how long a '
        'block takes is said after the first'
    )


def _time_left(blocks, seconds):
    """'block 1 of 8 took 40 s; about 5 min left (at most 11 min ...)'."""
    text = (
        f'block 1 of {blocks.repeats} took {_duration(seconds)}; about '
        f'{_duration(seconds * max(blocks.repeats - blocks.run, 0))} left'
    )
    if blocks.most > blocks.repeats:
        most = _duration(seconds * (blocks.most - blocks.run))
        text += f' (at most {most}, if {blocks.most} blocks run)'
    return text


def _duration(seconds):
    if seconds < 120:
        return f'{seconds:.0f} s'
    if seconds < 7200:
        return f'{seconds / 60:.0f} min'
    return f'{seconds / 3600:.1f} h'


def _say(out, text):
    print(f'\n[{text}]', file=out, flush=True)


def _unresolved(blocks):
    """'2 figures not within ±5.0 % yet (the widest ±9.1 %)'."""
    widths = [row[paired.RESOLVABLE] for row in blocks.wide]
    widest = max(w if w is not None else math.inf for w in widths)
    return (
        f'{len(widths)} figure{"s" if len(widths) > 1 else ""} not within '
        f'±{100 * blocks.resolve:.1f} % yet (the widest ±{100 * widest:.1f} %)'
    )


def _leg(config, checks, arms, extra, launch, plan, block, name, out):
    """Run one leg and record it in the plan; what it broke ('' if nothing)."""
    prefix, lock, arm = launch.prefix, launch.lock, arms[name]
    number = len(plan['legs']) + 1
    sub = os.path.join(prefix, f'{number:02d}-{name}')
    report = os.path.join(sub, 'report.json')
    args = [*runner.policy_options(config, arm.system, extra), *extra, *arm.args]
    cmd = runner.reframe_command(config, checks, arm.system, sub, report, args)
    print(f'\n[{name}, block {block + 1}] $ {shlex.join(cmd)}', file=out, flush=True)
    if lock:
        lock.record(f'pid {os.getpid()}, A/B session {prefix}')
    ran = launch.reframe(cmd, out)
    plan['legs'].append(
        {
            'arm': name,
            'block': block,
            'report': os.path.relpath(report, prefix),
            'status': ran.status,
        }
    )
    _save(prefix, plan)
    if not os.path.exists(report):
        if number == 1:
            raise ClusterbenchError(
                f'{report}: ReFrame wrote no report for A '
                f'({shlex.join(arm.args)}); see its output above'
            )
        return ''
    return _disturbance(report)


def _disturbance(report):
    """What the first DISTURBED figure of a leg's report broke ('' if none)."""
    try:
        figures, _ = runreport.extract(runreport.load(report), report)
    except ClusterbenchError:
        return ''  # judged (and reported) by load() with the session
    return next((f.disturbed for f in figures if f.disturbed), '')


def _save(prefix, plan):
    tmp = os.path.join(prefix, f'.{PLAN}.tmp')
    with open(tmp, 'w') as f:
        f.write(jsontext.dumps(plan, indent=1))
    os.replace(tmp, os.path.join(prefix, PLAN))


def load(prefix):
    """The plan of a stored A/B session, its samples (paired.Sample), the
    legs without a report (left out) and the failed test cases of the legs
    (arm, runreport.Failure; skipped tests are not failures)."""
    plan = abplan.load(os.path.join(prefix, PLAN))
    stored = [(leg['arm'], leg['block'], leg['report']) for leg in plan['legs']]
    samples, missing, failed = [], [], []
    for arm, block, report in stored:
        report = os.path.join(prefix, report)
        if not os.path.exists(report):
            missing.append(report)
            continue
        figures, failures = runreport.extract(runreport.load(report), report)
        failed += [(arm, f) for f in failures if f.phase != runreport.SKIPPED]
        _one_configuration(figures, report)
        samples += [
            paired.Sample(arm, block, f.test, f.variable, f.unit, f.value, f.disturbed)
            for f in figures
        ]
    return plan, samples, missing, failed


def interrupted(plan, samples):
    """How far a stored session got when it ended before its plan did:
    '3 of 8 planned blocks ran', with the blocks begun and not ended and the
    figures not resolved yet; '' for a session that ran its plan. Read from
    the plan as the loop of run() decides (Blocks.due), so that a session
    stopped by kill, a lost node or Ctrl-C says so when judged again."""
    legs = {}
    for leg in plan['legs']:
        legs.setdefault(leg['block'], []).append(leg['arm'])
    disturbed = {s.block for s in samples if s.disturbed}
    blocks = Blocks(
        plan['repeats'],
        plan.get('max_blocks'),
        plan.get('resolve'),
        plan.get('confidence') or paired.CONFIDENCE,
        run=len(legs),
        disturbed=len(disturbed & set(legs)),
    )
    if blocks.resolve and blocks.run - blocks.disturbed >= blocks.repeats:
        blocks.wide = paired.unresolved(
            paired.judge(samples, blocks.confidence), blocks.resolve
        )
    begun = {b: arms for b, arms in legs.items() if len(arms) < len(paired.BLOCK_ORDER)}
    if not begun and not blocks.due():
        return ''
    ended = blocks.run - len(begun)
    text = f'{ended} of {blocks.repeats} planned blocks ran'
    if blocks.disturbed:
        text += f' ({blocks.disturbed} with a DISTURBED leg)'
    for block, arms in sorted(begun.items()):
        text += (
            f', and {len(arms)} of the {len(paired.BLOCK_ORDER)} legs of '
            f'block {block + 1}'
        )
    if blocks.wide:
        text += f', {_unresolved(blocks)}'
    return text


def _one_configuration(figures, report):
    """Each test must run in one partition and environment per arm, else its
    A and B figures cannot be paired."""
    seen = {}
    for f in figures:
        where = (f.system, f.partition, f.environ)
        if seen.setdefault(f.test, where) != where:
            raise ClusterbenchError(
                f'{report}: {f.test} ran in more than one partition or environment; '
                'select one per arm (-p ENV, --system SYSTEM:PARTITION)'
            )

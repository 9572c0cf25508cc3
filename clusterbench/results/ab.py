"""`clusterbench ab`: is configuration B slower than A? Paired runs in one session.

Between sessions a shared machine moves by more than the changes a centre
must validate (a new MPI, a compiler flag, a BIOS setting); within one
session, alternating, it does not. Each block runs A, B, B, A: a drift of
the machine that is linear over a block cancels in the block's ratio
B/A, and the spread of that ratio between blocks is the noise that a
verdict must beat (:func:`clusterbench.judging.stats.paired_ratio_ci`).

Every run is an ordinary session (:func:`clusterbench.results.runner.run`)
under the A/B directory, listed in its ``ab.json``, so that the comparison
can be judged again from what was stored (``clusterbench ab --from DIR``).
"""

import dataclasses
import json
import math
import os
import shlex
import time

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import stats, vocabulary
from clusterbench.results import runner, runreport

MANIFEST = 'ab.json'
LOG = 'reframe.log'
FORMAT = 'clusterbench-ab/1'
ORDER = ('A', 'B', 'B', 'A')

WORSE = 'B WORSE'
BETTER = 'B BETTER'
CHANGED = 'B CHANGED'
UNRESOLVED = 'no difference resolved'
FAILED = 'FAILED'


@dataclasses.dataclass(frozen=True)
class Arm:
    """One configuration: a system (or system:partition) and ReFrame options."""

    name: str
    system: str
    options: tuple

    def describe(self):
        return ' '.join([self.system, *map(shlex.quote, self.options)])


def ab_directory(results, system):
    """A new directory for one A/B comparison under the results root."""
    root = runner.results_root(results)
    stamp = time.strftime('%Y%m%dT%H%M%S')
    path = os.path.join(root, system.replace(':', '-'), f'ab-{stamp}')
    base, n = path, 1
    while os.path.exists(path):
        n += 1
        path = f'{base}-{n}'
    os.makedirs(path)
    return path


def run(config_of, checks, arms, results, references, repeats, common, progress):
    """Run *repeats* blocks A B B A of the two *arms*; return the directory.

    *config_of*: system name -> site config; *common*: ReFrame options of
    both arms; *progress*: one line per run. ReFrame's own output goes to
    ``reframe.log`` in the directory.
    """
    if repeats < 1:
        raise ClusterbenchError(f'--repeats {repeats}: at least 1')
    directory = ab_directory(results, arms['A'].system.split(':')[0])
    manifest = {
        'format': FORMAT,
        'arms': {k: dataclasses.asdict(a) for k, a in arms.items()},
        'common': list(common),
        'runs': [],
    }
    with open(os.path.join(directory, LOG), 'a') as log:
        _blocks(config_of, checks, arms, references, repeats, common, progress, log,
                directory, manifest)  # fmt: skip
    return directory


def _blocks(config_of, checks, arms, references, repeats, common, progress, log,
            directory, manifest):  # fmt: skip
    total = repeats * len(ORDER)
    for block in range(repeats):
        for name in ORDER:
            arm = arms[name]
            step = len(manifest['runs']) + 1
            print(f'[{step}/{total}] block {block + 1}, {name}: {arm.describe()}',
                  file=progress, flush=True)  # fmt: skip
            session = runner.run(
                config_of(arm.system),
                checks,
                arm.system,
                directory,
                references,
                extra=[*arm.options, *common],
                out=log,
                confirm_runs=0,
            )
            manifest['runs'].append(
                {
                    'block': block,
                    'arm': name,
                    'reports': [os.path.relpath(r, directory) for r in session.reports],
                }
            )
            _write(directory, manifest)


def _write(directory, manifest):
    path = os.path.join(directory, MANIFEST)
    with open(path + '.new', 'w') as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + '.new', path)


def load(directory):
    """The manifest of a stored comparison, or one line naming what is wrong."""
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path) as f:
            manifest = json.load(f)
    except OSError as err:
        raise ClusterbenchError(f'{path}: {err.strerror}') from None
    except ValueError as err:
        raise ClusterbenchError(f'{path}: not JSON ({err})') from None
    if not isinstance(manifest, dict) or manifest.get('format') != FORMAT:
        raise ClusterbenchError(f'{path}: not an A/B manifest ({FORMAT})')
    return manifest


@dataclasses.dataclass
class Compared:
    """One figure of A and B: its samples per block, and the verdict."""

    test: str
    variable: str
    unit: str
    where: str
    a: list = dataclasses.field(default_factory=list)
    b: list = dataclasses.field(default_factory=list)
    blocks: dict = dataclasses.field(default_factory=dict)
    disturbed: int = 0
    ci: tuple = (None, None, None)
    verdict: str = UNRESOLVED
    detail: str = ''

    @property
    def a_median(self):
        return stats.median(self.a) if self.a else None

    @property
    def b_median(self):
        return stats.median(self.b) if self.b else None


def judge(directory):
    """(compared figures, failures) of a stored comparison."""
    manifest = load(directory)
    samples = []
    failures = []
    for entry in manifest['runs']:
        for rel in entry['reports']:
            figures, failed = runreport.figures_and_failures(
                os.path.join(directory, rel)
            )
            samples += [(entry['block'], entry['arm'], f) for f in figures]
            failures += [(entry['block'], entry['arm'], f) for f in failed]
    keep = _distinguishing(samples)
    found = {}
    for block, arm, fig in samples:
        key = (fig.test, fig.variable, *(getattr(fig, k) for k in keep))
        where = ':'.join(getattr(fig, k) for k in keep)
        entry = found.setdefault(key, Compared(fig.test, fig.variable, fig.unit, where))
        if fig.disturbed:
            entry.disturbed += 1
            continue
        (entry.a if arm == 'A' else entry.b).append(fig.value)
        entry.blocks.setdefault(block, {'A': [], 'B': []})[arm].append(fig.value)
    compared = [_verdict(c) for c in found.values()]
    return compared, [f for f in failures if f[2].phase != 'skipped']


def _distinguishing(samples):
    """The fields that tell figures apart within an arm: the partition and
    environment, unless the two arms differ in them (then A's and B's
    figures pair across them)."""
    keep = []
    for field in ('partition', 'environ'):
        seen = {arm: {getattr(f, field) for _, a, f in samples if a == arm}
                for arm in ('A', 'B')}  # fmt: skip
        if seen['A'] == seen['B']:
            keep.append(field)
    return keep


def _geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _verdict(c):
    pairs = [
        (_geomean(arms['A']), _geomean(arms['B']))
        for arms in c.blocks.values()
        if arms['A'] and arms['B'] and min(arms['A'] + arms['B']) > 0
    ]
    if not pairs:
        c.verdict, c.detail = UNRESOLVED, 'no block has both A and B'
        return c
    c.ci = stats.paired_ratio_ci(pairs)
    c.verdict, c.detail = verdict_of(c.variable, c.unit, c.ci, len(pairs))
    return c


def verdict_of(variable, unit, ci, blocks):
    """(verdict, detail) of a figure whose ratio B/A has the interval *ci*."""
    low, point, high = ci
    if low is None:
        return UNRESOLVED, '1 block: no interval (--repeats 2 or more)'
    resolvable = f'resolves ±{(high / low) ** 0.5 * 100 - 100:.1f} %'
    if low <= 1 <= high:
        return UNRESOLVED, f'{resolvable} ({blocks} blocks)'
    better = vocabulary.direction(variable, unit)
    change = f'{(point - 1) * 100:+.1f} %'
    if better is None:
        return CHANGED, change
    b_higher = low > 1
    worse = b_higher != (better == vocabulary.HIGHER)
    return (WORSE if worse else BETTER), change


COLUMNS = ('test', 'where', 'variable', 'unit', 'A', 'B', 'B/A', '95 % CI', 'blocks',
           'verdict', 'detail')  # fmt: skip


def rows(compared, failures):
    """Table rows (text), worst first: B WORSE, CHANGED, BETTER, unresolved."""
    order = {WORSE: 0, CHANGED: 1, BETTER: 2, UNRESOLVED: 3}
    table = []
    for c in sorted(compared, key=lambda c: (order[c.verdict], c.test, c.variable)):
        low, point, high = c.ci
        detail = c.detail + (
            f'; {c.disturbed} DISTURBED left out' if c.disturbed else ''
        )
        table.append(
            (c.test, c.where, c.variable, c.unit, _num(c.a_median), _num(c.b_median),
             _num(point), f'{_num(low)} .. {_num(high)}' if low else '-',
             str(len(c.blocks)), c.verdict, detail)
        )  # fmt: skip
    for block, arm, fail in failures:
        table.append(
            (fail.test, f'{fail.partition}:{fail.environ}', '-', '-', '-', '-', '-',
             '-', str(block + 1), FAILED, f'{arm} in block {block + 1} ({fail.phase}): '
             f'{fail.reason}')
        )  # fmt: skip
    return table


def _num(value):
    return '-' if value is None else f'{value:.4g}'


def exit_code(table):
    """1 when B is worse (or a run failed): the change must not roll out."""
    return 1 if any(row[9] in (WORSE, FAILED) for row in table) else 0

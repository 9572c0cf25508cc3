#!/usr/bin/env python3
"""How well do verdicts catch a real slowdown, and how often do they cry wolf?

Takes the samples recorded with the references (reference_data/*/provenance/)
and the references made of them (or, with --floor/--k, the references
`clusterbench references update` would make of them with that floor and k),
then simulates new sessions of N samples drawn (with replacement) from the
recorded samples, slowed down by 0 %, 5 % and 10 %, and judges them as
`clusterbench compare` does (median ratio outside the tolerance and its
bootstrap interval excluding 1).

A session counts as flagged when its verdict fails the run: SLOWER or WORSE,
beyond tolerance in the figure's bad direction (clusterbench.judging.vocabulary).
Prints, per slowdown, the share of simulated sessions flagged: over all
figures, over the figures whose tolerance is below the slowdown, and over
those whose tolerance is below it by more than half the recorded samples'
range (where the measured spread lets the slowdown clear the tolerance),
with the number of figures in each group.

With --synthetic SPREAD ..., the same for figures of a known spread (normal
noise, references from 9 samples, new sessions drawn from the same
distribution): what the verdicts do on a machine steadier than this one.

With --real, a *real* slowdown instead: each case (``--case``, default both a
compute-bound one, the CG solver's 7-point class B on all CPUs, which runs a
few seconds, and a NetPIPE intra-node sweep, bimodal between sessions on this
VM; or ``--reframe-args``) runs --runs times unchanged and --runs times in a
cgroup whose CPU bandwidth is capped to 90 % and 95 % of the machine's CPUs
(cgroup v2 ``cpu.max``, else v1 ``cpu.cfs_quota_us``; root): a 10 % and a
5 % slowdown of what is CPU-bound. Every run is a ReFrame session of its own,
so references and tolerances are made from the unchanged runs exactly as
`references update` makes them from sessions (per-session medians, reach,
the share floor). Per figure family it prints the tolerance, the slowdown
each cap really caused, the share of capped runs flagged (SLOWER/WORSE) and
of those at least named (flagged or INCONCLUSIVE), the false-flag rate on
unchanged runs (each judged against a reference made of the others), and
names the figures whose spread makes the targets (>= 95 % of 10 % slowdowns
flagged, <= 5 % false flags) impossible, and why. ``--tiny`` shrinks the
cases to check the script itself (its figures mean nothing). A cap lowers the ranks'
CPU share, which the run's conditions would call DISTURBED: these runs are
made with ``judge_conditions=false`` so that their figures are judged as a
regression's would be. Must be run on a quiet machine.

Usage: evaluation/flag_detection.py [--samples 5] [--trials 200]
    [--floor F --k K] [--synthetic 0.01 0.02 0.04] [reference_data]
       evaluation/flag_detection.py --real [--runs 10] [--caps 0.90 0.95]
    [--case cgsolver --case netpipe | --reframe-args '-c ... -n ...'] [--tiny]
"""

import argparse
import contextlib
import glob
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

from clusterbench.judging import stats, verdict, vocabulary
from clusterbench.references import provenance as refprov
from clusterbench.references import update as refupdate
from clusterbench.results import runreport
from clusterbench.sessions import runner

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The real cases: ReFrame arguments, and what --tiny adds to check the script.
CASES = {
    # Compute-bound: class B runs a few seconds on two ranks, so a CPU cap
    # slows it by the cap's share.
    'cgsolver': (
        '-c reframe_checks/cgsolver.py '
        '-n CGSolverCheck%stencil=7%variant=classic%ranks_per_node=all '
        '-p gnu-openmpi -S problem_class=B',
        '-S problem_class=S',
        None,
    ),
    # One rank: the steadiest figures here (1-3 % between sessions). A cap on
    # all CPUs would leave a one-rank job untouched, so it caps one CPU.
    'cgsolver1': (
        '-c reframe_checks/cgsolver.py '
        '-n CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1 '
        '-p gnu-openmpi -S problem_class=B',
        '-S problem_class=S',
        1,
    ),
    # Communication within the node: bimodal between sessions here.
    'netpipe': (
        '-c reframe_checks/netpipe.py -n NetPIPECheck%placement=intra%mode=pingpong '
        '-p gnu-openmpi -S netpipe_upper=1048576',
        '-S netpipe_upper=1024 -S netpipe_repeats=20',
        None,
    ),
}
#: The slowdown a run must not hide, and the spread beyond which the targets
#: cannot be met (issue 16).
TARGET_SLOWDOWN = verdict.DETECTION_THRESHOLD
MAX_SPREAD = 0.03
CGROUP_NAME = 'clusterbench-flag-detection'


def _lower_is_better(name, unit):
    """A slowdown makes these figures larger (clusterbench.judging.vocabulary)."""
    return vocabulary.direction(name.rsplit('/', 1)[-1], unit) == vocabulary.LOWER


def recorded(directory):
    # Retired references are out of use: not what verdicts judge against.
    for refdir in sorted(glob.glob(os.path.join(directory, '*', ''))):
        for _, test, where, entry in refprov.in_use(refdir):
            for name, fig in refprov.figures(entry).items():
                if fig.get('context_only'):
                    continue  # kept as context, never judged (too wide a band)
                values = fig.get('values') or []
                ref, lower, upper, unit = fig['reference']
                if len(values) >= 3 and name != 'iterations':
                    yield f'{test}/{where}/{name}', values, ref, lower, upper, unit


def rebuilt(figures, floor, k):
    """The figures with the references `references update` would make."""
    out = []
    for name, values, _, _, _, unit, draw in figures:
        median, tol, _ = refupdate.tolerance_of(values, floor, k)
        out.append((name, values, median, *refupdate.band(tol), unit, draw))
    return out


def synthetic(spread, count, recorded_samples, rng):
    """*count* figures of known relative spread: *recorded_samples* samples
    for the reference, and new sessions drawn from the same distribution."""

    def draw(rng, k):
        return [rng.gauss(100.0, spread * 100.0) for _ in range(k)]

    for i in range(count):
        values = draw(rng, recorded_samples)
        yield f'synthetic/{spread:g}/{i}', values, None, None, None, 'GB/s', draw


def simulate(figures, args, rng):
    print(
        f'{"slowdown":>9}  {"flagged (all)":>14}  {"tolerance < slowdown":>21}  '
        f'{"n":>3}  {"clear of the spread":>20}  {"n":>3}'
    )
    for slowdown in (0.0, 0.05, 0.10):
        flagged = total = 0
        within = {'allows': [0, 0], 'clear': [0, 0]}
        for name, values, ref, lower, upper, unit, draw in figures:
            lower_better = _lower_is_better(name, unit)
            factor = 1 + slowdown if lower_better else 1 - slowdown
            # Only a change in the bad direction (SLOWER/WORSE) fails a run.
            bad_side = 1 if lower_better else -1
            # "allows": the tolerance is below the slowdown; "clear": it is so
            # even after half the recorded samples' range, i.e. the slowed
            # samples lie beyond the tolerance, not just their median.
            half_range = (max(values) - min(values)) / (2 * ref)
            kinds = []
            if slowdown > 0 and upper < slowdown:
                kinds.append('allows')
                if upper + half_range < slowdown:
                    kinds.append('clear')
            for _ in range(args.trials):
                new = [v * factor for v in draw(rng, args.samples)]
                ci = stats.median_ratio_ci(
                    new, ref, n_boot=400, seed=rng.randrange(1 << 30)
                )
                hit = stats.departure(ci, lower, upper) == bad_side
                flagged += hit
                total += 1
                for kind in kinds:
                    within[kind][0] += hit
                    within[kind][1] += 1
        cells = []
        for hits, n in within.values():
            cells.append((f'{hits / n:.1%}' if n else 'n/a', n // args.trials))
        (allow, n_allow), (clear, n_clear) = cells
        print(
            f'{slowdown:>9.0%}  {flagged / total:>14.1%}  {allow:>21}  '
            f'{n_allow:>3}  {clear:>20}  {n_clear:>3}'
        )


# -- real slowdowns ---------------------------------------------------------


@contextlib.contextmanager
def capped_cgroup(share, period_us=10000, cpus=None):
    """A cgroup whose CPU bandwidth is *share* of *cpus* CPUs (all this
    machine's by default); yields the path of its ``cgroup.procs``. None for
    share None."""
    if share is None:
        yield None
        return
    cpus = cpus or os.cpu_count() or 1
    quota = max(1000, int(share * cpus * period_us))
    v2 = '/sys/fs/cgroup'
    controllers = _read(os.path.join(v2, 'cgroup.controllers')) or ''
    if 'cpu' in controllers.split():
        with contextlib.suppress(OSError):
            _write(os.path.join(v2, 'cgroup.subtree_control'), '+cpu')
        path = os.path.join(v2, CGROUP_NAME)
        settings = {'cpu.max': f'{quota} {period_us}'}
    elif os.path.isdir('/sys/fs/cgroup/cpu'):
        path = os.path.join('/sys/fs/cgroup/cpu', CGROUP_NAME)
        settings = {'cpu.cfs_period_us': str(period_us), 'cpu.cfs_quota_us': str(quota)}
    else:
        sys.exit('flag_detection: no cgroup v2 cpu controller and no v1 cpu hierarchy')
    try:
        os.makedirs(path, exist_ok=True)
        for name, value in settings.items():
            _write(os.path.join(path, name), value)
    except OSError as err:
        sys.exit(
            f'flag_detection: {path}: cannot set a CPU cap: {err.strerror} (root?)'
        )
    try:
        yield os.path.join(path, 'cgroup.procs')
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _write(path, text):
    with open(path, 'w') as f:
        f.write(text)


def real_run(reframe_args, config, cap=None, cpus=None):
    """One ReFrame session (in the capped cgroup): {figure: value} of its
    verified figures, and the ranks' CPU share it measured."""
    with tempfile.TemporaryDirectory(prefix='flagdet-') as prefix:
        report = os.path.join(prefix, 'report.json')
        extra = ['-S', 'judge_conditions=false', *shlex.split(reframe_args)]
        checks = extra.pop(extra.index('-c') + 1) if '-c' in extra else 'reframe_checks'
        if '-c' in extra:
            extra.remove('-c')
        cmd = runner.reframe_command(config, checks, 'local', prefix, report, extra)
        cmd[0] = os.path.join(os.path.dirname(sys.executable), 'reframe')
        with capped_cgroup(cap, cpus=cpus) as procs:

            def join():
                if procs:
                    _write(procs, str(os.getpid()))

            proc = subprocess.run(
                cmd, cwd=PROJECT, capture_output=True, text=True, preexec_fn=join
            )
        if not os.path.exists(report):
            sys.exit(f'flag_detection: ReFrame wrote no report:\n{proc.stdout[-2000:]}')
        figures, failures = runreport.figures_and_failures(report)
        data = runreport.load(report)
        shares = [
            c.get('run_conditions', {}).get('ranks_cpu_share')
            for r in data['runs']
            for c in r.get('testcases', [])
        ]
    if failures:
        sys.exit(f'flag_detection: a run failed: {failures[0]}')
    values = {
        f'{f.test.split()[0]}.{f.variable}': (f.value, f.unit)
        for f in figures
        if f.variable != 'iterations'  # a count: a cap cannot change it
    }
    share = next((s for s in shares if isinstance(s, (int, float))), None)
    return values, share


def family(name):
    """The check and the figure without its message-size suffix (``_8B``)."""
    test, _, figure = name.partition('.')
    return f'{test}.{re.sub(r"_[0-9][0-9A-Za-z]*$", "", figure)}'


def proposed(values, unit, name, args):
    """(reference, tolerance, spread, entry bounds) that `references update`
    makes of these runs, each a session of its own."""
    share = vocabulary.is_share(name.rsplit('.', 1)[-1], unit)
    ref, tol, spread = refupdate.tolerance_of(
        values,
        args.floor or 0.03,
        args.k or 3,
        sessions=[[v] for v in values],
        absolute_floor=vocabulary.SHARE_FLOOR if share else None,
    )
    return ref, tol, spread, refupdate.band(tol)


def judged(name, unit, value, reference, bounds):
    """The verdict word clusterbench gives one run of figure *name*."""
    test, variable = name.rsplit('.', 1)
    ref = None if reference is None else verdict.Reference(reference, *bounds)
    one = verdict.Judged(test, 'local', 'default', '-', variable, unit, [value], ref)
    return verdict.kind(one.judge().verdict)


FLAGS = (verdict.SLOWER, verdict.WORSE, verdict.FLAGGED)


def real_slowdowns(args, reframe_args, cpus=None):
    caps = sorted(args.caps, reverse=True)
    print(
        f'\n{args.runs} unchanged runs and {args.runs} per CPU cap '
        f'({", ".join(f"{c:.0%}" for c in caps)} of {cpus or os.cpu_count()} CPUs): '
        f'{reframe_args}'
    )
    runs = {None: [real_run(reframe_args, args.config) for _ in range(args.runs)]}
    for cap in caps:
        runs[cap] = [
            real_run(reframe_args, args.config, cap, cpus) for _ in range(args.runs)
        ]
    names = sorted(set.intersection(*(set(v) for run in runs.values() for v, _ in run)))
    rows, impossible = {}, []
    for name in names:
        unit = runs[None][0][0][name][1]
        base = [v[name][0] for v, _ in runs[None]]
        median, tol, spread, bounds = proposed(base, unit, name, args)
        false = []
        if len(base) > 2:
            for i in range(len(base)):
                others = base[:i] + base[i + 1 :]
                ref, _, _, others_bounds = proposed(others, unit, name, args)
                word = judged(name, unit, base[i], ref, others_bounds)
                false.append(word in FLAGS or word == verdict.FASTER)
        row = rows.setdefault(family(name), {'tol': [], 'false': [], 'caps': {}})
        # The tolerance on the bad side (in points for a share near zero).
        row['tol'].append(
            verdict.bad_side_width(name.rsplit('.', 1)[-1], unit, median, *bounds)
        )
        row['false'] += false
        for cap in caps:
            capped = [v[name][0] for v, _ in runs[cap]]
            effect = statistics.median(capped) / median - 1 if median else 0.0
            words = [judged(name, unit, v, median, bounds) for v in capped]
            cell = row['caps'].setdefault(
                cap, {'effect': [], 'flagged': [], 'named': []}
            )
            cell['effect'].append(effect)
            cell['flagged'] += [w in FLAGS for w in words]
            cell['named'] += [w in FLAGS or w == verdict.INCONCLUSIVE for w in words]
        width = verdict.bad_side_width(name.rsplit('.', 1)[-1], unit, median, *bounds)
        why = []
        if spread > MAX_SPREAD:
            why.append(f'spread between runs {spread:.1%} > {MAX_SPREAD:.0%}')
        if width > TARGET_SLOWDOWN:
            why.append(
                f'tolerance {width:.0%} on the bad side > {TARGET_SLOWDOWN:.0%}: '
                'a 10 % slowdown stays inside (INCONCLUSIVE at best)'
            )
        if why:
            impossible.append((name, '; '.join(why)))
    shares = {
        cap: statistics.median([s for _, s in run if s is not None] or [float('nan')])
        for cap, run in runs.items()
    }
    print(
        "ranks' CPU share (median): "
        + ', '.join(
            f'{"unchanged" if c is None else f"cap {c:.0%}"} {s:.0%}'
            for c, s in shares.items()
        )
    )
    head = f'{"figure family":34}  {"n":>2}  {"tolerance":>9}'
    for cap in caps:
        slowdown = f'{1 - cap:.0%} slowdown'
        head += f'  {f"cap {cap:.0%}: effect":>17}  {slowdown + " flagged":>17}'
        head += f'  {"or named":>8}'
    print(head + f'  {"false flags":>11}')
    for fam, row in sorted(rows.items()):
        line = f'{fam:34}  {len(row["tol"]):>2}  {statistics.median(row["tol"]):>9.0%}'
        for cap in caps:
            cell = row['caps'][cap]
            flagged = sum(cell['flagged']) / len(cell['flagged'])
            named = sum(cell['named']) / len(cell['named'])
            line += f'  {statistics.median(cell["effect"]):>+17.1%}'
            line += f'  {flagged:>17.0%}  {named:>8.0%}'
        false = (
            f'{sum(row["false"]) / len(row["false"]):.0%}' if row['false'] else 'n/a'
        )
        print(line + f'  {false:>11}')
    if impossible:
        print(
            '\nfigures for which >= 95 % of 10 % slowdowns flagged at <= 5 % '
            'false flags is impossible here:'
        )
        for name, why in impossible:
            print(f'  {name}: {why}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('directory', nargs='?', default='reference_data')
    parser.add_argument('--samples', type=int, default=5)
    parser.add_argument('--trials', type=int, default=200)
    parser.add_argument('--floor', type=float, help='rebuild tolerances: floor')
    parser.add_argument('--k', type=float, help='rebuild tolerances: k x spread')
    parser.add_argument(
        '--synthetic',
        type=float,
        nargs='*',
        metavar='SPREAD',
        help='also figures of these known relative spreads (e.g. 0.01 0.02)',
    )
    parser.add_argument(
        '--real',
        action='store_true',
        help='inject real slowdowns (a cgroup CPU cap) into real runs (root)',
    )
    parser.add_argument('--runs', type=int, default=10, help='--real: runs per case')
    parser.add_argument(
        '--caps', type=float, nargs='+', default=[0.90, 0.95], help='--real: CPU caps'
    )
    parser.add_argument(
        '--case',
        action='append',
        choices=sorted(CASES),
        help='--real: a default case (repeatable; default all of them)',
    )
    parser.add_argument('--reframe-args', help='--real: a case of your own')
    parser.add_argument(
        '--tiny',
        action='store_true',
        help='--real: tiny sizes, to check the script (the figures mean nothing)',
    )
    parser.add_argument('--config', default='site_configs/local.py')
    args = parser.parse_args()
    if args.real:
        if args.reframe_args:
            cases = [(args.reframe_args, None)]
        else:
            cases = []
            for name in args.case or sorted(CASES):
                full, tiny, cpus = CASES[name]
                cases.append((f'{full} {tiny}' if args.tiny else full, cpus))
        for reframe_args, cpus in cases:
            real_slowdowns(args, reframe_args, cpus)
        return
    floor = 0.03 if args.floor is None else args.floor
    k = 3.0 if args.k is None else args.k
    rng = random.Random(1)
    figures = [
        (*fig, lambda rng, n, values=fig[1]: rng.choices(values, k=n))
        for fig in recorded(args.directory)
    ]
    if not figures:
        sys.exit(f'{args.directory}: no recorded samples (need >= 3 per figure)')
    if args.floor is not None or args.k is not None:
        print(f'tolerances rebuilt: max({floor:g}, {k:g} x 1.4826 x MAD / median)')
        figures = rebuilt(figures, floor, k)
    print(
        f'{len(figures)} figures with recorded samples; {args.samples} samples '
        f'per simulated session (drawn from the recorded ones), {args.trials} '
        'sessions per figure and slowdown'
    )
    simulate(figures, args, rng)
    for spread in args.synthetic or ():
        print(
            f'\nsynthetic: 50 figures of relative spread {spread:.1%} (normal), '
            f'references from 9 samples, tolerance max({floor:g}, {k:g} x robust '
            f'spread); {args.samples} new samples per session'
        )
        simulate(rebuilt(list(synthetic(spread, 50, 9, rng)), floor, k), args, rng)


if __name__ == '__main__':
    main()

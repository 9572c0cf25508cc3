#!/usr/bin/env python3
"""Can `clusterbench ab` find a real 10 % slowdown, and does it keep quiet
on no change? Paired A/B runs of our CG solver, judged by judging/paired.py.

Three families, each one configuration of the solver (src/cgsolver, built
once with MPICH's mpicc -O3) and its `time` figure:

- compute: 27-point stencil, n=20 (fits in cache), 1 rank;
- memory: 7-point stencil, class W (n=32, ~6 MB per iteration), 1 rank;
- communication: 7-point, class S, 2 ranks (~40 % of the solve in MPI),
  started by MPICH's hydra (~60 ms a start; Open MPI's mpirun took ~2.5 s).

A leg is --repeat solves back to back, their solve times summed (the solver
stops at its breakdown, so a larger iteration limit would not lengthen it).

B is A under a CPU quota (default 90 %): the process tree of B runs in a
cgroup (v1 ``cpu``) with cfs_quota = quota x ranks x cfs_period (period
5 ms). That is a real slowdown of the solver, not a multiplied number; it
binds only when the solver would otherwise get its whole CPU, so both arms
run at nice -20 in cgroups of the largest weight. Throttling comes in whole
slices, so the realised slowdown (median B/A over all runs) is printed beside
the detection rate; --quota per family brings it near 10 %.

One A/B run is --blocks blocks (4 legs each, ABBA and BAAB in turn, as
`clusterbench ab` runs them). The A/A run of the same
sequence pairs the first A of each block with its second A, in alternating
order (first-against-second in even blocks, second-against-first in odd
ones) so that a drift does not become a difference: a change found there is
a false finding. Found: the interval of B/A excludes 1 (SLOWER), judged
by paired.judge exactly as `clusterbench ab` judges: at its 99 %, and the
same runs again at 95 % (the price of each level in detection and in false
findings, on the same legs).

Each leg's conditions are measured around it as every run's are
(noisyhost.conditions: steal and other processes' share of the CPUs) and
judged by the same thresholds: a leg that broke one is DISTURBED and left
out, as `clusterbench ab` leaves it out, and the output says how many. A run
that keeps fewer than two blocks is NOT PAIRED: neither found nor false.
A block with a DISTURBED leg is measured again, and with --resolve blocks go
on until the run resolves that change, as `clusterbench ab` runs them (the
same sessions.ab.Blocks and paired.more_blocks); --wait-quiet lets a burst
of steal pass after a disturbed block.

The script needs root (cgroups, nice) and MPICH; it prints the conditions
(load average and CPU steal before and after each family) and the figures.
Usage: evaluation/ab_study.py [--runs 20] [--blocks 5] [--repeat 1]
        [--quota 0.9] [--work 0] [--families ...] [--budget SECONDS]
        [--resolve FRACTION] [--max-blocks M] [--wait-quiet SECONDS]
        [--json FILE] [--samples FILE]
With --budget the runs of each family stop when its share of the budget is
spent; the output says how many runs were made.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from clusterbench.judging import paired, stats, verdict
from clusterbench.noisyhost import conditions as runconditions
from clusterbench.noisyhost import quiet
from clusterbench.sessions.ab import Blocks

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CGROUP = '/sys/fs/cgroup/cpu/clusterbench-ab-study-{}'
PERIOD_US = 5000
QUOTA = 0.9
#: Every run is judged at the confidence of `clusterbench ab` and at 95 %.
LEVELS = (paired.CONFIDENCE, 0.95)
#: The largest cgroup v1 CPU weight (the default is 1024).
SHARES = 262144
SOLVER = ('--tol', '1e-30')  # fixed work: the iteration limit ends every solve
FAMILIES = {
    'compute': (1, ('--n', '20', '--stencil', '27', '--maxit', '300')),
    'memory': (1, ('--class', 'W', '--stencil', '7', '--maxit', '100')),
    'communication': (2, ('--class', 'S', '--stencil', '7', '--maxit', '400')),
}


def build(workdir):
    out = os.path.join(workdir, 'build')
    subprocess.run(
        ['make', '-s', '-C', os.path.join(PROJECT, 'src', 'cgsolver'),
         'CC=mpicc.mpich', f'BUILD={out}'],
        check=True,
    )  # fmt: skip
    return os.path.join(out, 'cgsolver')


def cgroup(name, ranks, quota):
    path = CGROUP.format(name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, 'cpu.cfs_period_us'), 'w') as f:
        f.write(str(PERIOD_US))
    # Group scheduling weighs cgroups against each other: nice -20 inside
    # ours would not win a CPU against a loaded sibling group.
    with open(os.path.join(path, 'cpu.shares'), 'w') as f:
        f.write(str(SHARES))
    limit = int(quota * ranks * PERIOD_US) if quota else -1
    with open(os.path.join(path, 'cpu.cfs_quota_us'), 'w') as f:
        f.write(str(limit))
    return path


def solve(binary, ranks, args, group):
    """The solve time (s) of one run inside *group*, at nice -20."""

    def enter():
        with open(os.path.join(group, 'cgroup.procs'), 'w') as f:
            f.write(str(os.getpid()))
        os.nice(-20)

    cmd = [binary, *SOLVER, *args]
    if ranks > 1:
        # MPICH's hydra starts two ranks in ~60 ms; Open MPI's mpirun took
        # ~2.5 s a leg here, which made the communication family unaffordable.
        cmd = ['mpiexec.hydra', '-np', str(ranks), *cmd]
    done = subprocess.run(
        cmd, capture_output=True, text=True, preexec_fn=enter, timeout=300
    )
    for line in done.stdout.splitlines():
        if line.startswith('CGSOLVER_JSON:'):
            return json.loads(line.split(':', 1)[1])['time_s']
    raise RuntimeError(f'no result from {cmd}: {done.stdout[-300:]}{done.stderr}')


def conditions():
    """(load1, steal share since boot is useless: steal over 1 s)."""
    with open('/proc/loadavg') as f:
        load = float(f.read().split()[0])
    first = _cpu()
    time.sleep(1)
    second = _cpu()
    total = sum(second) - sum(first)
    steal = (second[7] - first[7]) / total if total else 0.0
    return load, steal


def _cpu():
    with open('/proc/stat') as f:
        return [int(v) for v in f.readline().split()[1:]]


def leg(binary, ranks, args, group, repeat):
    """One leg: *repeat* solves back to back, their solve times summed, and
    what the leg broke of the thresholds every run is judged by ('' if
    nothing): `clusterbench ab` leaves such a leg out, and so does the study."""
    before, cpu_before = runconditions.Snapshot(), _children_cpu()
    value = sum(solve(binary, ranks, args, group) for _ in range(repeat))
    after, cpu = runconditions.Snapshot(), _children_cpu() - cpu_before
    found = runconditions.measure(before, after, ranks, cpu)
    seen = (found['steal_share'], found['other_cpu_share'])
    return value, runconditions.disturbed(found), seen


def _children_cpu():
    """CPU seconds of every reaped descendant (hydra waits for its ranks)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(binary, ranks, args, groups, blocks, repeat=1, wait=0):
    """Samples of one A/B run (A, B, B, A per block), of its A/A run, and
    (steal, other processes' share) of each leg of the A/B run. Blocks
    (sessions.ab.Blocks) go on as `clusterbench ab` runs them
    (paired.more_blocks): a block with a DISTURBED leg is measured again,
    and with a resolution asked for, blocks go on until the figure resolves
    it. With *wait*, the block after a DISTURBED one waits (at most *wait*
    seconds) for the machine to be quiet, as the checks' wait_quiet does: a
    burst of steal is let pass."""
    ab, aa, seen = [], [], []
    blocks, last_disturbed = blocks.fresh(), False
    while blocks.due():
        if wait and last_disturbed:
            quiet.wait_quiet(wait, say=lambda text: None)
        block = blocks.run
        order = paired.block_order(block)
        legs = [leg(binary, ranks, args[arm], groups[arm], repeat) for arm in order]
        for arm, (value, broke, steal_other) in zip(order, legs):
            ab.append(paired.Sample(arm, block, 'cg', 'time', 's', value, broke))
            seen.append(steal_other)
        legs = [(value, broke) for value, broke, _ in legs]
        first, second = [v for arm, v in zip(order, legs) if arm == paired.A]
        if block % 2:
            first, second = second, first
        aa.append(paired.Sample(paired.A, block, 'cg', 'time', 's', *first))
        aa.append(paired.Sample(paired.B, block, 'cg', 'time', 's', *second))
        last_disturbed = any(broke for _, broke in legs)
        blocks.ended(last_disturbed, lambda: ab)
    return ab, aa, seen


def more_work(args, work):
    """*args* with the iteration limit raised by the fraction *work*."""
    args = list(args)
    where = args.index('--maxit') + 1
    args[where] = str(round(int(args[where]) * (1 + work)))
    return tuple(args)


def family(
    name,
    binary,
    runs,
    blocks,
    budget,
    quota=QUOTA,
    repeat=1,
    work=0.0,
    keep=None,
    wait=0,
):
    ranks, solver = FAMILIES[name]
    args = {paired.A: solver, paired.B: more_work(solver, work) if work else solver}
    groups = {paired.A: cgroup('A', ranks, None), paired.B: cgroup('B', ranks, quota)}
    before = conditions()
    start = time.monotonic()
    runs_samples = []
    for _ in range(runs):
        if budget and time.monotonic() - start > budget:
            break
        runs_samples.append(one_run(binary, ranks, args, groups, blocks, repeat, wait))
        if keep:
            keep.write(json.dumps(_legs(name, quota, work, *runs_samples[-1])) + '\n')
            keep.flush()
    after = conditions()
    result = {
        'family': name,
        'ranks': ranks,
        'args': ' '.join(solver),
        'work': work,
        'runs': len(runs_samples),
        'blocks': blocks.repeats,
        'max_blocks': blocks.most,
        'resolve': blocks.resolve,
        'repeat': repeat,
        'wait_quiet': wait,
        'quota': quota,
        'seconds': round(time.monotonic() - start),
        'load_steal_before': before,
        'load_steal_after': after,
    }
    for level in LEVELS:
        result[f'{level:.2f}'] = judged(runs_samples, level)
    return result


def judged(runs_samples, confidence):
    """What the runs' A/B and A/A samples give at *confidence*."""
    ab_rows = [paired.judge(ab, confidence)[0] for ab, *_ in runs_samples]
    aa_rows = [paired.judge(aa, confidence)[0] for _, aa, _ in runs_samples]
    judged_only = (paired.NO_DIFFERENCE, paired.NOT_PAIRED)
    run_blocks = [len({s.block for s in ab}) for ab, *_ in runs_samples]
    return {
        'found': sum(r[-1] == verdict.SLOWER for r in ab_rows),
        # With no quota (--quota 0) B is A: any finding of the A/B run is false.
        'found_any': sum(r[-1] not in judged_only for r in ab_rows),
        'false': sum(r[-1] not in judged_only for r in aa_rows),
        'realised': _middle([r[5] for r in ab_rows]),
        'resolvable': _middle([r[8] for r in ab_rows]),
        'median_time_A': _middle([r[3] for r in ab_rows]),
        # Legs left out as DISTURBED (A/B samples), and runs that kept fewer
        # than two blocks: NOT PAIRED, never found.
        'left_out': sum(r[10] for r in ab_rows),
        'legs': sum(len(ab) for ab, *_ in runs_samples),
        'not_paired': sum(r[-1] == paired.NOT_PAIRED for r in ab_rows),
        # Blocks a run took (median, most): more when disturbed or unresolved.
        'blocks_run': [
            _middle(run_blocks),
            max(run_blocks, default=None),
        ],
    }


def _middle(values):
    values = [v for v in values if v is not None]
    return stats.median(values) if values else None


def _legs(family, quota, work, samples, _aa, seen):
    """One run's legs as a JSON line: enough to judge it again, with each
    leg's steal and other processes' share of the CPUs."""
    return {
        'family': family,
        'quota': quota,
        'work': work,
        'legs': [
            (s.arm, s.block, s.value, s.disturbed, *shares)
            for s, shares in zip(samples, seen)
        ],
    }


def show(result):
    n = result['runs']
    primary, other = (result[f'{level:.2f}'] for level in LEVELS)
    aa = not result['quota'] and not result['work']
    # With B = A, a finding of the A/B run itself is false.
    key = 'found_any' if aa else 'found'
    what = 'false findings' if aa else 'found'
    text = (
        f'{result["family"]:<14} {n:>4} runs x {result["blocks"]} blocks'
        + (f' until ±{100 * result["resolve"]:.1f} %' if result['resolve'] else '')
        + f' (median {primary["blocks_run"][0]:.0f}, most {primary["blocks_run"][1]}'
        f' of {result["max_blocks"]})  '
        + ('B = A (no quota)  ' if aa else '')
        + f'{what} {primary[key]}/{n} ({100 * primary[key] / max(n, 1):.0f} %) at '
        f'{LEVELS[0] * 100:.0f} %, {other[key]}/{n} at {LEVELS[1] * 100:.0f} %  '
    )
    if not aa:
        text += f'A/A false {primary["false"]}/{n}, {other["false"]}/{n}  '
    text += (
        f'B/A {primary["realised"]:.3f}  '
        f'resolvable ±{100 * primary["resolvable"]:.1f} % '
        f'(±{100 * other["resolvable"]:.1f} %)  '
        f'A time {primary["median_time_A"] * 1e3:.1f} ms  '
        f'DISTURBED legs left out {primary["left_out"]} of '
        f'{primary["legs"]}, not paired {primary["not_paired"]}/{n}  '
        f'load/steal {result["load_steal_before"][0]:.1f}/'
        f'{100 * result["load_steal_before"][1]:.0f} % -> '
        f'{result["load_steal_after"][0]:.1f}/'
        f'{100 * result["load_steal_after"][1]:.0f} %  ({result["seconds"]} s)'
    )
    print(text, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=20)
    parser.add_argument('--blocks', type=int, default=5)
    parser.add_argument('--families', nargs='+', default=list(FAMILIES))
    parser.add_argument('--budget', type=float, default=0, metavar='SECONDS')
    parser.add_argument(
        '--quota',
        type=float,
        default=QUOTA,
        help="B's CPU quota, a fraction of its ranks' CPUs (default %(default)s); "
        'the throttling of short solves costs more than 1 - quota; 0: no '
        'quota, B is A (an A/A study in the ABBA order of an A/B one)',
    )
    parser.add_argument(
        '--repeat',
        type=int,
        default=1,
        help='solves per leg, their times summed: a leg long enough that one '
        'CPU-share hiccup moves it less (the solver stops at its breakdown, so '
        'a larger iteration limit would not lengthen it)',
    )
    parser.add_argument(
        '--work',
        type=float,
        default=0.0,
        help='B solves this fraction more iterations (0.1: 10 %% more work), '
        'with --quota 0: a slowdown of two coupled ranks that a quota cannot '
        'make near 10 %%',
    )
    parser.add_argument(
        '--wait-quiet',
        type=float,
        default=0,
        metavar='SECONDS',
        help='after a block with a DISTURBED leg, wait at most SECONDS for 3 '
        'quiet seconds (busy <= 5 %%, steal <= 2 %%) before the next block',
    )
    parser.add_argument(
        '--resolve',
        type=float,
        metavar='FRACTION',
        help='after --blocks blocks, more until the run resolves ±FRACTION '
        '(`clusterbench ab --resolve`)',
    )
    parser.add_argument(
        '--max-blocks',
        type=int,
        metavar='M',
        help="at most M blocks a run (default: `clusterbench ab`'s)",
    )
    parser.add_argument('--json', metavar='FILE')
    parser.add_argument(
        '--samples',
        metavar='FILE',
        help="append every run's legs (arm, block, time) to FILE, a JSON line each",
    )
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print('ab_study: needs root (a cgroup for the quota, nice -20)')
        return 2
    when = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    arms = (
        f'B = A under a CPU quota of {args.quota:.0%} (cgroup v1, period '
        f'{PERIOD_US} us)'
        if args.quota
        else f'B = A with {args.work:.0%} more iterations'
        if args.work
        else 'B = A, no quota (A/A)'
    )
    print(
        f'ab_study: {arms}, both at nice -20; {when}; {os.cpu_count()} CPUs',
        flush=True,
    )
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        binary = build(workdir)
        share = args.budget / len(args.families) if args.budget else 0
        keep = open(args.samples, 'a') if args.samples else None
        try:
            for name in args.families:
                results.append(
                    family(
                        name,
                        binary,
                        args.runs,
                        Blocks(args.blocks, args.max_blocks, args.resolve),
                        share,
                        args.quota,
                        args.repeat,
                        args.work,
                        keep,
                        args.wait_quiet,
                    )
                )
                show(results[-1])
        finally:
            if keep:
                keep.close()
            for arm in (paired.A, paired.B):
                try:
                    os.rmdir(CGROUP.format(arm))
                except OSError:
                    pass
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())

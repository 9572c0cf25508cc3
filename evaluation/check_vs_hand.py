#!/usr/bin/env python3
"""The harness's figures against the same binaries run by hand.

A check is only worth its references if it measures what the benchmark
measures: running it through ReFrame must not change the figure. A warm-up
ReFrame session on the embedded ``local`` system runs every chosen check once
(for ``npb`` it builds the source tree; its figures are not counted). Then,
for each of ``--repeats`` rounds and each test in turn, the script runs that
one test through ReFrame (selected by its hash) and the very binary it ran
(executable, options, rank count and pinning from the run report) with plain
``mpirun``, back to back, alternating which goes first from round to round and
test to test, so that the drift of a shared machine falls on both sides
alike. Both outputs go through the same parser. It prints, per figure, the
median of each side, the difference and whether it is within ``--tolerance``
percent.

    .venv/bin/python evaluation/check_vs_hand.py npb --npb-source DIR
        [--class A] [--benchmarks bt,cg,...] [--repeats 3] [--tolerance 3]
    .venv/bin/python evaluation/check_vs_hand.py comm --osu-prefix DIR
        --imb-prefix DIR [--repeats 3] [--tolerance 5]

``npb`` runs the eight benchmarks of ``--class`` (BT and SP on 1 and 4
ranks, the others on 2) and compares Mop/s total and time; after the
warm-up the checks take the binaries it built as installed ones
(``-S npb_prefix``), so that no round rebuilds. ``comm`` runs the intra-node
OSU and IMB checks (point-to-point and collectives) and compares every
figure. The environment is ``--environ`` (gnu-openmpi). Hand runs use
``mpirun.openmpi`` or ``mpiexec.hydra`` with the check's pinning options.

``--hand-vs-hand`` runs the binaries by hand on both sides after the warm-up:
the agreement this machine allows at all, to read the real comparison by.

Exit status: 0, or 1 when a check or hand run failed or a figure is outside
the tolerance (``--report-only`` always exits 0 after a complete run).
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from clusterbench.checks import imb as imb_check
from clusterbench.checks import osu as osu_check
from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import imb, npb, osu
from clusterbench.sessions import runner
from clusterbench.testcluster import testing

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAUNCHERS = {
    'gnu-openmpi': ['mpirun.openmpi', '-np'],
    'gnu-mpich': ['mpiexec.hydra', '-n'],
}
HAND_ENV = {
    'OMPI_ALLOW_RUN_AS_ROOT': '1',
    'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
    # More ranks than cores (BT/SP on 4 here), as the site config allows.
    'OMPI_MCA_rmaps_base_oversubscribe': '1',
    'OMP_NUM_THREADS': '1',
}


def load1():
    return os.getloadavg()[0]


LOCAL = os.path.join(PROJECT, 'site_configs', 'local.py')


def reframe(workdir, tag, environ, args):
    """One ReFrame session; its report's test cases (fixtures left out)."""
    prefix = os.path.join(workdir, tag)
    # One test at a time, as `clusterbench run` decides for `local`: a build
    # beside a benchmark would be measured too.
    policy = runner.policy_options(LOCAL, 'local')
    _, out, report = testing.run_reframe(
        LOCAL,
        prefix,
        '-p',
        environ,
        '--keep-stage-files',
        *policy,
        *args,
        env={'RFM_SQLITE_DB_FILE': os.path.join(prefix, 'results.db')},
        timeout=None,
    )
    if report is None:
        raise ClusterbenchError(f'{tag}: ReFrame wrote no report:\n{out[-3000:]}')
    cases = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    return [c for c in cases if c['result'] != 'skip']


def hand_run(case, environ):
    """The check's binary, options and ranks under plain mpirun: stdout."""
    cmd = [
        *LAUNCHERS[environ],
        str(case['num_tasks']),
        *case.get('pinning', []),
        case['executable'],
        *case['executable_opts'],
    ]
    with tempfile.TemporaryDirectory(prefix='hand-') as cwd:
        done = subprocess.run(
            cmd,
            cwd=cwd,
            env={**os.environ, **HAND_ENV},
            capture_output=True,
            text=True,
        )
    if done.returncode:
        raise ClusterbenchError(
            f'by hand: {shlex.join(cmd)}: exit {done.returncode}\n{done.stderr[-2000:]}'
        )
    return done.stdout


def check_figures(case):
    if case['result'] != 'pass':
        raise ClusterbenchError(f'{case["display_name"]}: {case["fail_reason"]}')
    return {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}


# -- what is compared ------------------------------------------------------


def npb_key(case):
    return f'{case["benchmark"]}.{case["npb_class"]}.{case["num_tasks"]}'


def npb_hand_figures(case, text):
    result = npb.verify(
        text,
        source='hand run',
        benchmark=case['benchmark'],
        npb_class=case['npb_class'],
        nprocs=case['num_tasks'],
    )
    return {name: value for name, (value, _) in npb.figures(result).items()}


def npb_sessions(opts, built=None):
    """ReFrame argument lists: the source tree for the warm-up, the binaries it
    built (*built*, a directory) for the rounds."""
    common = ['-c', 'reframe_checks/npb.py', '-S', f'npb_class={opts.npb_class}']
    if built:
        common += ['-S', f'npb_prefix={built}']
    else:
        common += ['-S', f'npb_source={opts.npb_source}']
    chosen = opts.benchmarks.split(',')
    sessions = [('default-ranks', [*common, '-n', f'benchmark=({"|".join(chosen)})'])]
    square = [b for b in chosen if b in ('bt', 'sp')]
    if square:
        sessions.append(
            (
                'bt-sp-4',
                [*common, '-n', f'benchmark=({"|".join(square)})', '-S', 'npb_ranks=4'],
            )
        )
    return sessions


def npb_collect(cases, workdir):
    """A directory of the binaries the warm-up built, as an installed NPB."""
    built = os.path.join(workdir, 'built-bin')
    os.makedirs(built, exist_ok=True)
    for case in cases:
        link = os.path.join(built, os.path.basename(case['executable']))
        if not os.path.exists(link):
            os.symlink(case['executable'], link)
    return built


def comm_key(case):
    return case.get('benchmark') or case['name'].split()[0]


def comm_hand_figures(case, text):
    name = case['name'].split()[0]
    if name.startswith('OSU'):
        pairs = case['pairs'] if case['benchmark'] == 'osu_mbw_mr' else None
        curve = osu.verify(
            text,
            'hand run',
            benchmark=case['benchmark'],
            min_size=case['osu_min_size'],
            max_size=case['osu_max_size'],
            pairs=pairs,
        )
        found = osu_check.figures_of(case['benchmark'], curve)
    else:
        benchmarks = case['imb_benchmarks']
        found = imb_check.figures_of(
            imb.verify(
                text,
                'hand run',
                benchmarks=benchmarks,
                processes=case['num_tasks'],
                max_size=1 << case['imb_max_log2'],
            )
        )
    return {k: v for k, (v, _) in found.items()}


def comm_sessions(opts, built=None):
    args = ['-c', 'reframe_checks/osu.py', '-c', 'reframe_checks/imb.py']
    args += ['-S', f'osu_prefix={opts.osu_prefix}']
    args += ['-S', f'imb_prefix={opts.imb_prefix}']
    for name in (
        'OSUPointToPointCheck%.*placement=intra',
        'OSUCollectiveCheck',
        'IMBPointToPointCheck%.*placement=intra',
        'IMBCollectiveCheck',
    ):
        args += ['-n', name]
    return [('comm', args)]


SUITES = {
    'npb': (npb_sessions, npb_key, npb_hand_figures, npb_collect),
    'comm': (comm_sessions, comm_key, comm_hand_figures, None),
}


def only(args, hashcode):
    """*args* with its name filters replaced by the one test's hash."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == '-n':
            skip = True
        else:
            kept.append(arg)
    return [*kept, '-n', f'/{hashcode}']


# -- the comparison ----------------------------------------------------------


def best_of(figure, values):
    """The suites' own statistic over runs: the minimum of a latency or time,
    the maximum of a bandwidth, rate or Mop/s; none for n_half."""
    if 'n_half' in figure:
        return None
    low = 'latency' in figure or figure == 'time'
    return min(values) if low else max(values)


def diff_pct(a, b):
    if a is None or b is None:
        return None
    return 100.0 * (a - b) / b if b else float('inf')


def compare(check, hand, tolerance):
    """Rows (key, figure, check median, hand median, diff %, within?, n,
    best diff %): medians of the rounds, and the best-of-rounds difference."""
    rows = []
    for key in sorted(set(check) | set(hand)):
        c, h = check.get(key, []), hand.get(key, [])
        if not c or not h:
            rows.append((*key, None, None, None, False, min(len(c), len(h)), None))
            continue
        mc, mh = statistics.median(c), statistics.median(h)
        diff = diff_pct(mc, mh)
        best = diff_pct(best_of(key[1], c), best_of(key[1], h))
        rows.append(
            (*key, mc, mh, diff, abs(diff) <= tolerance, min(len(c), len(h)), best)
        )
    return rows


def fmt(value):
    return 'missing' if value is None else f'{value:.6g}'


def report(check, hand, tolerance, repeats):
    """Print the table; the rows outside the tolerance."""
    rows = compare(check, hand, tolerance)
    print(
        f'\n{"run":24} {"figure":28} {"check":>12} {"by hand":>12} {"diff":>8}  '
        f'<= {tolerance:g}%  n  {"best":>8}'
    )
    for key, name, mc, mh, diff, ok, n, best in rows:
        d = 'n/a' if diff is None else f'{diff:+.1f}%'
        b = '-' if best is None else f'{best:+.1f}%'
        print(
            f'{key:24} {name:28} {fmt(mc):>12} {fmt(mh):>12} {d:>8}  '
            f'{"yes" if ok else "NO":>5}  {n}  {b:>8}'
        )
    outside = [r for r in rows if not r[5]]
    bests = [r[7] for r in rows if r[7] is not None]
    print(
        f'\n{len(rows) - len(outside)}/{len(rows)} figures within {tolerance:g}% '
        f'(medians of {repeats} rounds); best of the rounds (minimum latency or '
        f'time, maximum bandwidth, rate or Mop/s): '
        f'{sum(abs(b) <= tolerance for b in bests)}/{len(bests)} within {tolerance:g}%'
    )
    return outside


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('suite', choices=sorted(SUITES))
    parser.add_argument(
        '--npb-source', default=os.environ.get('CLUSTERBENCH_NPB_SOURCE', '')
    )
    parser.add_argument('--class', dest='npb_class', default='A')
    parser.add_argument(
        '--benchmarks', default='bt,cg,ep,ft,is,lu,mg,sp', help='NPB: which ones'
    )
    parser.add_argument(
        '--osu-prefix', default=os.environ.get('CLUSTERBENCH_OSU_PREFIX', '')
    )
    parser.add_argument(
        '--imb-prefix', default=os.environ.get('CLUSTERBENCH_IMB_PREFIX', '')
    )
    parser.add_argument('--environ', default='gnu-openmpi', choices=sorted(LAUNCHERS))
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--tolerance', type=float)
    parser.add_argument('--report-only', action='store_true')
    parser.add_argument('--workdir')
    parser.add_argument('--json', help='write every sample to this file')
    parser.add_argument(
        '--hand-vs-hand',
        action='store_true',
        help='after the warm-up, run both sides by hand (the null comparison)',
    )
    parser.add_argument(
        '--from-json', help='print the comparison of a --json file; run nothing'
    )
    opts = parser.parse_args(argv)
    tolerance = opts.tolerance or (3.0 if opts.suite == 'npb' else 5.0)
    if opts.from_json:
        try:
            with open(opts.from_json) as f:
                saved = json.load(f)
            check, hand = (
                {tuple(k.split('|')): v for k, v in saved[side].items()}
                for side in ('check', 'hand')
            )
        except (OSError, ValueError, KeyError, AttributeError) as err:
            print(f'error: {opts.from_json}: not a --json file of this script ({err})')
            return 1
        rounds = max(map(len, check.values()), default=0)
        outside = report(check, hand, tolerance, rounds)
        return 0 if opts.report_only or not outside else 1
    needs = {'npb': ('npb_source',), 'comm': ('osu_prefix', 'imb_prefix')}
    missing = [n for n in needs[opts.suite] if not getattr(opts, n)]
    if missing:
        print(f'SKIP: give --{missing[0].replace("_", "-")} (nothing to run)')
        return 0
    sessions, key_of, hand_figures, collect = SUITES[opts.suite]
    workdir = opts.workdir or tempfile.mkdtemp(prefix=f'check-vs-hand-{opts.suite}-')
    print(f'check_vs_hand {opts.suite}: {opts.repeats} rounds, environ {opts.environ}')
    print(f'  start: load1 {load1():.2f}, work in {workdir}', flush=True)
    check, hand = {}, {}

    def by_check(tag, args, hashcode):
        if opts.hand_vs_hand:
            # The null comparison: the same binary by hand on both sides
            # shows how closely this machine repeats a figure at all.
            case = cases_by_hash[hashcode]
            text = hand_run(case, opts.environ)
            for name, value in hand_figures(case, text).items():
                check.setdefault((key_of(case), name), []).append(value)
            return case
        found = reframe(workdir, tag, opts.environ, only(args, hashcode))
        if len(found) != 1:
            raise ClusterbenchError(f'{tag}: /{hashcode} selected {len(found)} tests')
        case = found[0]
        for name, value in check_figures(case).items():
            check.setdefault((key_of(case), name), []).append(value)
        return case

    def by_hand(case):
        text = hand_run(case, opts.environ)
        for name, value in hand_figures(case, text).items():
            hand.setdefault((key_of(case), name), []).append(value)

    try:
        t0 = time.time()
        warm = []
        for tag, args in sessions(opts):
            cases = reframe(workdir, f'warm-up-{tag}', opts.environ, args)
            for case in cases:
                check_figures(case)  # a warm-up failure ends the comparison
            warm.append(cases)
        cases_by_hash = {c['hashcode']: c for cases in warm for c in cases}
        built = collect(list(cases_by_hash.values()), workdir) if collect else None
        print(
            f'  warm-up: {sum(map(len, warm))} checks, {time.time() - t0:.0f} s, '
            f'load1 {load1():.2f}',
            flush=True,
        )
        rounds = list(zip(sessions(opts, built), warm))
        for rnd in range(opts.repeats):
            t0 = time.time()
            turn = 0
            for (tag, args), cases in rounds:
                for i, first in enumerate(cases):
                    run_tag = f'r{rnd}-{tag}-{i}'
                    if (rnd + turn) % 2 == 0:
                        by_hand(by_check(run_tag, args, first['hashcode']))
                    else:
                        # The binary the check will run: after the warm-up
                        # NPB's checks run the collected copies of it.
                        by_hand(first)
                        by_check(run_tag, args, first['hashcode'])
                    turn += 1
            print(
                f'  round {rnd + 1}: {turn} checks and hand runs, '
                f'{time.time() - t0:.0f} s, load1 {load1():.2f}',
                flush=True,
            )
    except ClusterbenchError as err:
        print(f'error: {err}')
        return 1
    if opts.json:
        with open(opts.json, 'w') as f:
            json.dump(
                {
                    'check': {f'{k}|{n}': v for (k, n), v in check.items()},
                    'hand': {f'{k}|{n}': v for (k, n), v in hand.items()},
                },
                f,
                indent=1,
            )
    outside = report(check, hand, tolerance, opts.repeats)
    print(f'end load1 {load1():.2f}')
    return 0 if opts.report_only or not outside else 1


if __name__ == '__main__':
    sys.exit(main())

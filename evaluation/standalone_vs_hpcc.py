#!/usr/bin/env python3
"""Standalone STREAM and HPL (built by the checks) against HPCC's, alternating.

The default suite takes STREAM and HPL from Debian's ``hpcc`` when their
releases cannot be had, and from the checks' own builds when they can; the
two must measure the same machine alike. Each round runs two ReFrame
sessions on ``local``, back to back, alternating which goes first:

- HPCC: ``HPCCCheck`` (its single-process STREAM, StarDGEMM and HPL);
- standalone: ``StreamCheck`` with one OpenMP thread (HPCC's single STREAM
  is one process with the others idle) and ``HPLCheck``, at the same HPL
  problem as HPCC's (same ``hpl_mem_fraction``, NB and grid).

It prints per round and as medians: standalone STREAM triad against HPCC's
single STREAM triad (target: within 5 %), and standalone HPL against the
DGEMM rate of all ranks (HPCC's StarDGEMM x ranks; target: >= 90 %), with
HPCC's own HPL efficiency beside it. Run it on a quiet machine; nothing here
is asserted.

    .venv/bin/python evaluation/standalone_vs_hpcc.py [--rounds 3]
        [--hpl-source DIR] [--stream-url URL --stream-sha256 HEX]
        [--environ gnu-openmpi] [--hpl-mem-fraction F] [--hpl-nb NB] [--tiny]

Without ``--hpl-source``/``--stream-url`` the releases come from the cache,
``$CLUSTERBENCH_MIRROR`` or their URLs. ``--tiny`` (N=1000, 2M-element
STREAM arrays) only checks that the script works.
"""

import argparse
import os
import statistics
import sys
import tempfile

from clusterbench.bench import sources
from clusterbench.core.errors import ClusterbenchError
from clusterbench.sessions import runner
from clusterbench.testcluster import testing

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LOCAL = os.path.join(PROJECT, 'site_configs', 'local.py')


def session(workdir, tag, environ, args, checks):
    """One ReFrame session; ``{check name: figures}`` of its passed tests."""
    prefix = os.path.join(workdir, tag)
    os.makedirs(os.path.join(prefix, 'no-references'), exist_ok=True)
    _, out, report = testing.run_reframe(
        LOCAL,
        prefix,
        '-p',
        environ,
        *runner.policy_options(LOCAL, 'local'),
        *args,
        checks=checks,
        env={
            'RFM_SQLITE_DB_FILE': os.path.join(prefix, 'results.db'),
            # Compared here, not judged: no references.
            'RFM_REFERENCE_PREFIX': os.path.join(prefix, 'no-references'),
        },
        timeout=None,
    )
    if report is None:
        raise ClusterbenchError(f'{tag}: ReFrame wrote no report:\n{out[-3000:]}')
    found = {}
    for case in report['runs'][0]['testcases']:
        if case['fixture']:
            continue
        if case['result'] != 'pass':
            raise ClusterbenchError(
                f'{tag}: {case["display_name"]}: {case["result"]} '
                f'({case["fail_reason"]})'
            )
        figures = {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}
        found[case['name'].split()[0]] = {
            **figures,
            'num_tasks': case['num_tasks'],
            'problem': case.get('hpl_problem'),
        }
    return found


def hpcc_round(workdir, tag, opts, common):
    found = session(workdir, tag, opts.environ, common, ['reframe_checks/hpcc.py'])
    hpcc = found['HPCCCheck']
    return {
        'hpcc_single_triad': hpcc['stream_single_triad'],
        'dgemm_all_ranks': hpcc['dgemm_star'] * hpcc['num_tasks'],
        'hpcc_hpl': hpcc['hpl'],
    }


def standalone_round(workdir, tag, opts, common):
    args = ['-S', 'stream_threads=1', *common]
    if opts.hpl_source:
        args += ['-S', f'hpl_source={opts.hpl_source}']
    if opts.stream_url:
        args += ['-S', f'stream_url={opts.stream_url}']
        args += ['-S', f'stream_sha256={opts.stream_sha256}']
    if opts.tiny:
        args += ['-S', 'stream_array_size=2000000']
    if opts.hpl_mem_fraction:
        args += ['-S', f'HPLCheck.hpl_mem_fraction={opts.hpl_mem_fraction}']
    if opts.hpl_nb:
        args += ['-S', f'HPLCheck.hpl_nb={opts.hpl_nb}']
    checks = ['reframe_checks/stream.py', 'reframe_checks/hpl.py']
    found = session(workdir, tag, opts.environ, args, checks)
    problem = found['HPLCheck']['problem']
    if problem and not opts.said_problem:
        print(f'standalone HPL: {problem}', flush=True)
        opts.said_problem = True
    return {
        'standalone_triad': found['StreamCheck']['stream_triad'],
        'standalone_hpl': found['HPLCheck']['hpl'],
    }


def pct(a, b):
    return 100.0 * a / b


def line(n, f):
    return (
        f'{n:>5}  {f["standalone_triad"]:>12.1f}  {f["hpcc_single_triad"]:>12.1f}  '
        f'{pct(f["standalone_triad"], f["hpcc_single_triad"]):>7.1f}%  '
        f'{f["standalone_hpl"]:>9.2f}  {f["dgemm_all_ranks"]:>9.2f}  '
        f'{pct(f["standalone_hpl"], f["dgemm_all_ranks"]):>7.1f}%  '
        f'{pct(f["hpcc_hpl"], f["dgemm_all_ranks"]):>7.1f}%'
    )


def main(argv=None):
    top = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    top.add_argument('--rounds', type=int, default=3)
    top.add_argument('--environ', default='gnu-openmpi')
    top.add_argument('--hpl-source', help='an unpacked HPL 2.3 tree')
    top.add_argument('--stream-url', help="stream.c's URL (file:// works)")
    top.add_argument('--stream-sha256')
    top.add_argument('--tiny', action='store_true', help='N=1000: a check only')
    top.add_argument('--workdir', help='keep the sessions here')
    top.add_argument(
        '--hpl-mem-fraction',
        type=float,
        help="the standalone HPL's hpl_mem_fraction (default: the check's)",
    )
    top.add_argument('--hpl-nb', type=int, help="the standalone HPL's NB")
    opts = top.parse_args(argv)
    opts.said_problem = False
    if opts.stream_url and not opts.stream_sha256:
        path = opts.stream_url.removeprefix('file://')
        if not os.path.isfile(path):
            top.error('--stream-url needs --stream-sha256 unless it is a file:// URL')
        opts.stream_sha256 = sources.sha256_of(path)
    common = ['-S', 'hpl_n=1000', '-S', 'hpl_nb=64'] if opts.tiny else []
    workdir = opts.workdir or tempfile.mkdtemp(prefix='standalone-vs-hpcc-')
    print(f'sessions in {workdir}; load average {os.getloadavg()[0]:.2f}')
    print(
        'round  triad alone   HPCC single   ratio    HPL alone  DGEMMxN    '
        'HPL/DGEMM  HPCC HPL/DGEMM'
    )
    rounds = []
    for n in range(1, opts.rounds + 1):
        order = [('standalone', standalone_round), ('hpcc', hpcc_round)]
        if n % 2 == 0:
            order.reverse()
        figures = {}
        for tag, run in order:
            figures.update(run(workdir, f'round{n}-{tag}', opts, common))
        rounds.append(figures)
        print(line(n, figures), flush=True)
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    print(line('med', medians))
    print(
        'targets: standalone triad within 5 % of HPCC single; '
        'standalone HPL >= 90 % of DGEMM x ranks'
    )
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except ClusterbenchError as err:
        print(f'standalone_vs_hpcc: error: {err}', file=sys.stderr)
        sys.exit(2)

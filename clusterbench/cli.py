"""The ``clusterbench`` command line."""

import argparse
import importlib
import sys

from clusterbench import (
    __version__,
    history,
    profile,
    refdata,
    refupdate,
    replay,
    report,
    runner,
    runreport,
    sessionreport,
    spackenv,
    verdict,
)
from clusterbench.errors import ClusterbenchError, run_command

FORMATS = {
    'table': verdict.format_table,
    'csv': verdict.format_csv,
    'json': verdict.format_json,
}


def _load_all(paths):
    figures, failures = [], []
    for path in paths:
        figs, fails = runreport.figures_and_failures(path)
        figures += figs
        failures += fails
    return figures, failures


def _compare(args):
    figures, failures = _load_all(args.reports)
    baseline = None
    if args.against:
        baseline, _ = _load_all(args.against)
    elif args.history:
        baseline = history.figures(args.history, args.config)
    judged = verdict.group(figures, baseline, tolerance=args.tolerance)
    table = verdict.rows(judged, failures)
    print(FORMATS[args.format](table))
    if args.format == 'table':
        print(f'\n{verdict.summary(table)}')
        details = sessionreport.text(args.reports)
        if details:
            print(f'\n{details}')
    return 1 if verdict.anything_wrong(table) else 0


def _report(args):
    return report.run(args)


def _profile(args):
    print(profile.format_profile(profile.load(args.file)))
    return 0


def _check_references(args):
    for path, tests in refdata.check_directory(args.directory).items():
        figures = sum(tests.values())
        print(f'{path}: {len(tests)} test(s), {figures} reference figure(s): ok')
    stale = refdata.stale_entries(args.directory, args.site_configs, args.checks)
    for problem in stale:
        print(f'stale: {problem}')
    # References of another kind of machine are no error: they apply there.
    for other in refdata.unmatched_kinds(args.directory, args.site_configs):
        print(f'other machine: {other}')
    return 1 if stale else 0


def _update_references(args):
    groups = refupdate.collect(args.reports)
    proposals = refupdate.propose(
        groups, floor=args.floor, k=args.k, min_samples=args.min_samples
    )
    if not proposals:
        raise ClusterbenchError(
            f'no figure has {args.min_samples} samples or more: nothing to update'
        )
    for line in refupdate.diff(proposals, args.directory):
        print(line)
    if args.write:
        for path in refupdate.write(proposals, args.directory, args.reports):
            print(f'wrote {path}')
    else:
        print('\n(dry run: nothing written; add --write to apply)')
    return 0


def _replay(args):
    table = replay.replay(args.path, args.references)
    print(FORMATS[args.format](table))
    if args.format == 'table':
        print(f'\n{verdict.summary(table)}')
    return 1 if verdict.anything_wrong(table) else 0


def _run(args):
    extra = list(args.reframe_args)
    if args.wait_quiet:
        # The checks' hook waits before each test on a local partition.
        extra = ['-S', f'wait_quiet={args.wait_quiet:g}', *extra]
    return runner.run(
        args.config or f'site_configs/{args.system.split(":")[0]}.py',
        args.checks,
        args.system,
        args.results,
        args.references,
        extra=extra,
    )


def parser():
    top = argparse.ArgumentParser(prog='clusterbench', description=__doc__)
    top.add_argument('--version', action='version', version=__version__)
    sub = top.add_subparsers(dest='command', required=True)

    cmp = sub.add_parser(
        'compare',
        help='judge the figures of ReFrame JSON reports against their references',
    )
    cmp.add_argument('reports', nargs='+', metavar='REPORT')
    cmp.add_argument('--format', choices=sorted(FORMATS), default='table')
    base = cmp.add_mutually_exclusive_group()
    base.add_argument(
        '--against',
        nargs='+',
        metavar='REPORT',
        help='judge against the samples of other runs instead of the references',
    )
    base.add_argument(
        '--history',
        metavar='QUERY',
        help="judge against stored sessions of ReFrame's results "
        "database, e.g. 'now-7d:now'",
    )
    cmp.add_argument(
        '--config',
        default='site_configs/local.py',
        help='site config whose results database --history reads',
    )
    cmp.add_argument(
        '--tolerance',
        type=float,
        default=0.05,
        help='relative band for --against/--history figures that '
        'have no reference (default 0.05)',
    )
    cmp.set_defaults(func=_compare)

    refs = sub.add_parser('references', help='work with reference_data/')
    refs_sub = refs.add_subparsers(dest='action', required=True)
    chk = refs_sub.add_parser('check', help='validate every reference file')
    chk.add_argument('directory', nargs='?', default='reference_data')
    chk.add_argument('--site-configs', default='site_configs')
    chk.add_argument('--checks', default='reframe_checks')
    chk.set_defaults(func=_check_references)
    upd = refs_sub.add_parser(
        'update',
        help='propose references from run reports (median, tolerance '
        'from measured spread); write them only with --write',
    )
    upd.add_argument(
        '--from',
        dest='reports',
        nargs='+',
        required=True,
        metavar='REPORT',
        help='ReFrame JSON run reports',
    )
    upd.add_argument('--directory', default='reference_data')
    upd.add_argument(
        '--floor',
        type=float,
        default=0.03,
        help='smallest relative tolerance (default 0.03)',
    )
    upd.add_argument(
        '--k',
        type=float,
        default=3.0,
        help='tolerance = max(floor, k x robust relative spread) (default 3)',
    )
    upd.add_argument('--min-samples', type=int, default=1)
    upd.add_argument(
        '--write',
        action='store_true',
        help='write the proposal (atomically); default: only show it',
    )
    upd.set_defaults(func=_update_references)

    prof = sub.add_parser('profile', help='show an MPI profile (mpiprof JSON)')
    prof.add_argument('file')
    prof.set_defaults(func=_profile)

    envs = sub.add_parser(
        'spack-envs', help='validate spack_envs/ and every spack.lock (no Spack needed)'
    )
    envs.add_argument('directory', nargs='?', default='spack_envs')
    envs.set_defaults(func=lambda args: spackenv.main([args.directory]))

    rep = sub.add_parser(
        'replay',
        help='re-judge stored outputs against the current references '
        'without re-running anything',
    )
    rep.add_argument('path', help='a session directory of results/ or a report')
    rep.add_argument('--references', default='reference_data')
    rep.add_argument('--format', choices=sorted(FORMATS), default='table')
    rep.set_defaults(func=_replay)

    run = sub.add_parser(
        'run', help='run the suite on a system with ReFrame, then print the verdicts'
    )
    run.add_argument(
        '--system', default='local', help='system or system:partition (default: local)'
    )
    run.add_argument('--config', help='site config (default: site_configs/<system>.py)')
    run.add_argument('--checks', default='reframe_checks')
    run.add_argument('--results', default='results')
    run.add_argument('--references', default='reference_data')
    run.add_argument(
        '--wait-quiet',
        nargs='?',
        type=float,
        const=60.0,
        default=0.0,
        metavar='SECONDS',
        help='before each test on a local partition, wait (at most SECONDS, '
        'default 60) until the machine has been quiet for 3 s; says so when '
        'it gives up',
    )
    run.add_argument(
        'reframe_args',
        nargs=argparse.REMAINDER,
        help='after "--": more ReFrame options, e.g. -S hpl_n=4000',
    )
    run.set_defaults(func=_run)
    rpt = sub.add_parser(
        'report',
        help='write one self-contained HTML report (plots embedded, the CSV of '
        'every plot beside it) from run reports and/or the results database',
    )
    report.add_arguments(rpt)
    rpt.set_defaults(func=_report)
    for name, (_, what) in DELEGATED.items():
        # Listed here; main() hands everything after the name to the module.
        sub.add_parser(name, help=what, add_help=False)
    return top


#: Subcommands that are whole programs of their own: name -> (module, help).
DELEGATED = {
    'acceptance': (
        'clusterbench.acceptance.__main__',
        'node and fabric acceptance, and scaling (see: clusterbench acceptance -h)',
    ),
    'testcluster': (
        'clusterbench.testcluster.__main__',
        'the Slurm test cluster box: up, down, status, fault, clear '
        '(see: clusterbench testcluster -h)',
    ),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in DELEGATED:
        module = importlib.import_module(DELEGATED[argv[0]][0])
        return module.main(argv[1:], prog=f'clusterbench {argv[0]}')
    args = parser().parse_args(argv)
    if getattr(args, 'reframe_args', None) and args.reframe_args[0] == '--':
        args.reframe_args = args.reframe_args[1:]
    return run_command('clusterbench', args.func, args)


if __name__ == '__main__':
    sys.exit(main())

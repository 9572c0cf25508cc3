"""The ``clusterbench`` command line."""

import argparse
import importlib
import os
import sys

from clusterbench import __version__, report, siteinit, spackenv
from clusterbench.bench import profile
from clusterbench.core import paths
from clusterbench.core.errors import ClusterbenchError, run_command
from clusterbench.judging import selection, trend, verdict
from clusterbench.judging import view as verdictview
from clusterbench.references import directory as refdir
from clusterbench.references import lookup as reflookup
from clusterbench.references import provenance as refprov
from clusterbench.references import store as refstore
from clusterbench.references import update as refupdate
from clusterbench.references import validate as refdata
from clusterbench.results import history, replay, runner, runreport
from clusterbench.results import session as sessionreport


def _load_all(paths, references=None):
    figures, failures = [], []
    for path in paths:
        data = runreport.load(path)
        if references:
            reflookup.rejudge(data, references)
        figs, fails = runreport.extract(data, path)
        figures += figs
        failures += fails
    return figures, failures


def _compare(args):
    references = refdir.chosen(args.references)
    figures, failures = _load_all(args.reports, references)
    baseline = None
    if args.against:
        baseline, _ = _load_all(args.against, references)
    elif args.history:
        baseline = history.figures(args.history, args.config)
    judged = verdict.group(figures, baseline, tolerance=args.tolerance)
    table = verdict.rows(judged, failures)
    _announce_beside(args, references)
    _show(table, args)
    if args.format == 'table':
        details = sessionreport.text(args.reports, verdictview.terminal_width())
        if details:
            print(f'\n{details}')
    return verdict.exit_code(table, args.strict)


def _show(table, args):
    print(
        verdictview.render(table, args.format, args.strict, args.verbose, args.show_all)
    )


def _report(args):
    return report.run(args)


def _trend(args):
    from clusterbench.report import trendplot

    if not args.reports and not args.history:
        raise ClusterbenchError('no sessions: give --history QUERY and/or REPORT files')
    datas = []
    for path in args.reports:
        found = replay.find_report(path)
        datas.append((found, runreport.load(found)))
    if args.history:
        for session in history.sessions(args.history, args.config):
            uuid = (session.get('session_info') or {}).get('uuid', '?')
            datas.append((f'stored session {uuid}', session))
    series = trend.collect(datas, args.pattern, args.min_shift)
    if not series:
        raise ClusterbenchError(
            f'no figure matches {args.pattern!r} in {len(datas)} session(s)'
        )
    for one in series:
        print(trend.describe(one))
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    for path in trendplot.write(series, args.output):
        print(f'wrote {path}')
    return 0


def _profile(args):
    print(profile.format_profile(profile.load(args.file)))
    return 0


def _references(args):
    """The reference directory of this command, announced as the header line
    of its text output."""
    directory = refdir.resolve(args.references or getattr(args, 'directory', None))
    refdir.announce(directory)
    return directory


def _announce_beside(args, directory):
    """Say which references judged a table: a header line above it, or on
    stderr beside CSV/JSON (said only once the table stands, so that an
    error stays one line)."""
    refdir.announce(
        directory or refdir.RECORDED,
        sys.stdout if args.format == 'table' else sys.stderr,
    )


def _check_references(args):
    directory = _references(args)
    for path, tests in refdata.check_directory(directory).items():
        figures = sum(tests.values())
        print(f'{path}: {len(tests)} test(s), {figures} reference figure(s): ok')
    problems = [
        f'stale: {p}'
        for p in refdata.stale_entries(directory, args.site_configs, args.checks)
    ]
    with refstore.shared_lock(directory):
        interrupted = refstore.interrupted(directory)
        problems += [f'inconsistent: {p}' for p in refprov.inconsistencies(directory)]
    problems += [f'interrupted update: {line}' for line in interrupted]
    if interrupted:
        problems.append('run `clusterbench references repair`')
    for problem in problems:
        print(problem)
    if not problems:
        print(f'{directory}: every reference entry matches its provenance: ok')
    # References of another kind of machine are no error: they apply there.
    for other in refdata.unmatched_kinds(directory, args.site_configs):
        print(f'other machine: {other}')
    wide = refdata.wide_tolerances(directory, args.max_tolerance)
    for warning in wide:
        print(f'warning: {warning}')
    if wide:
        print(
            f'{len(wide)} figure(s) with a tolerance above '
            f'{args.max_tolerance * 100:.0f} % (--max-tolerance)'
        )
    return 1 if problems else 0


def _repair_references(args):
    directory = _references(args)
    if not os.path.isdir(directory):
        raise ClusterbenchError(f'{directory}: no such reference directory')
    with refstore.locked(directory):
        done = refstore.repair(directory)
    for line in done or [f'{directory}: no interrupted update: nothing to repair']:
        print(line)
    problems = refprov.inconsistencies(directory)
    for problem in problems:
        print(f'inconsistent (not repairable here): {problem}')
    return 1 if problems else 0


def _update_references(args):
    directory = _references(args)
    groups = refupdate.collect(args.reports)
    proposals = refupdate.propose(
        groups,
        floor=args.floor,
        k=args.k,
        min_samples=args.min_samples,
        one_sided=args.one_sided,
    )
    if not proposals:
        raise ClusterbenchError(
            f'no figure has {args.min_samples} samples or more: nothing to update'
        )
    for line in refupdate.diff(proposals, directory):
        print(line)
    if args.write:
        notes = []
        written = refupdate.write(
            proposals, directory, args.reports, results=args.results, notes=notes
        )
        for line in notes:
            print(line)
        for path in written:
            print(f'wrote {path}')
    else:
        print('\n(dry run: nothing written; add --write to apply)')
    return 0


def _replay(args):
    directory = refdir.resolve(args.references)
    table = replay.replay(args.path, directory)
    _announce_beside(args, directory)
    _show(table, args)
    return verdict.exit_code(table, args.strict)


def _run(args):
    selection.check_system_name(args.system)
    extra = list(args.reframe_args)
    if args.wait_quiet:
        # The checks' hook waits before each test on a local partition.
        extra = ['-S', f'wait_quiet={args.wait_quiet:g}', *extra]
    return runner.run(
        args.config or f'site_configs/{args.system.split(":")[0]}.py',
        args.checks,
        args.system,
        args.results,
        refdir.resolve(args.references),
        extra=extra,
        strict=args.strict,
        verbose=args.verbose,
        show_all=args.show_all,
        junit=args.junit,
        wait=not args.no_wait,
    )


REFERENCES_HELP = (
    'reference directory (default: $RFM_REFERENCE_PREFIX, else reference_data)'
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
    verdictview.add_arguments(cmp)
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
    cmp.add_argument(
        '--references',
        metavar='DIR',
        help='judge against the references in DIR (default: $RFM_REFERENCE_PREFIX'
        ' if set, else those ReFrame recorded in the report)',
    )
    cmp.set_defaults(func=_compare)

    refs = sub.add_parser('references', help='work with reference_data/')
    refs_sub = refs.add_subparsers(dest='action', required=True)
    chk = refs_sub.add_parser('check', help='validate every reference file')
    chk.add_argument('directory', nargs='?', help=REFERENCES_HELP)
    chk.add_argument('--references', metavar='DIR', help=REFERENCES_HELP)
    chk.add_argument('--site-configs', default='site_configs')
    chk.add_argument('--checks', default='reframe_checks')
    chk.add_argument(
        '--max-tolerance',
        type=float,
        default=0.10,
        metavar='FRACTION',
        help='warn for each figure whose tolerance on its bad side is wider '
        '(default 0.10: a 10 %% regression must be detectable)',
    )
    chk.set_defaults(func=_check_references)
    fix = refs_sub.add_parser(
        'repair',
        help='complete (roll forward) or undo (roll back) an interrupted '
        '`references update --write`',
    )
    fix.add_argument('--references', metavar='DIR', help=REFERENCES_HELP)
    fix.set_defaults(func=_repair_references)
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
    upd.add_argument(
        '--references',
        '--directory',
        dest='references',
        metavar='DIR',
        help=REFERENCES_HELP,
    )
    upd.add_argument(
        '--results',
        default='results',
        help='results root: provenance stores report paths relative to it '
        '(default: results)',
    )
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
        '--one-sided',
        action='store_true',
        help='bound only the bad side: (ref, -tol, null) for a figure better '
        'higher, (ref, null, +tol) for one better lower; plain ReFrame then '
        'passes a faster figure too',
    )
    upd.add_argument(
        '--write',
        action='store_true',
        help='write the proposal (one transaction over all its files); '
        'default: only show it',
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
    rep.add_argument('--references', metavar='DIR', help=REFERENCES_HELP)
    verdictview.add_arguments(rep)
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
    run.add_argument(
        '--references',
        metavar='DIR',
        help=REFERENCES_HELP + '; ReFrame is given the same (RFM_REFERENCE_PREFIX)',
    )
    verdictview.add_arguments(run, formats=False)
    run.add_argument(
        '--junit',
        metavar='FILE',
        help='also write the verdicts as JUnit XML (one testcase per figure)',
    )
    run.add_argument(
        '--no-wait',
        action='store_true',
        help='refuse, rather than wait, when another session is measuring on '
        'this node (local partitions)',
    )
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
    trd = sub.add_parser(
        'trend',
        help='each figure against the date of its session, with its reference '
        'band and the session where it moved (SVG, PNG and CSV)',
    )
    trd.add_argument(
        'pattern',
        metavar='FIGURE-PATTERN',
        help='regular expression searched in TEST:FIGURE, e.g. gflops or '
        '"CGSolverCheck.*:time"',
    )
    trd.add_argument(
        'reports', nargs='*', metavar='REPORT', help='run reports or session dirs'
    )
    trd.add_argument(
        '--history',
        metavar='QUERY',
        help="sessions of ReFrame's results database, e.g. 'now-30d:now'",
    )
    trd.add_argument(
        '--config',
        default='site_configs/local.py',
        help='site config whose results database --history reads',
    )
    trd.add_argument(
        '-o',
        '--output',
        default='results/trend',
        help='stem of the files written: STEM.svg, STEM.png, STEM.csv '
        '(default results/trend)',
    )
    trd.add_argument(
        '--min-shift',
        type=float,
        default=trend.DEFAULT_MIN_SHIFT,
        help='smallest relative move named as a change point (default 0.05)',
    )
    trd.set_defaults(func=_trend)
    rpt = sub.add_parser(
        'report',
        help='write one self-contained HTML report (plots embedded, the CSV of '
        'every plot beside it) from run reports and/or the results database',
    )
    report.add_arguments(rpt)
    rpt.set_defaults(func=_report)
    paths.add_arguments(
        sub.add_parser(
            'paths', help='where the checks, site configs and references in use are'
        )
    )
    siteinit.add_arguments(
        sub.add_parser('site', help='generate a site configuration from the cluster')
    )
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
    'mirror': (
        'clusterbench.bench.mirror',
        'download the default benchmark releases into DIR for an air-gapped '
        'site, or --check one (see: clusterbench mirror -h)',
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

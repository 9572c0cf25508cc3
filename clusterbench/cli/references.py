"""`clusterbench references check|repair|update|show`: validate
reference_data/, repair an interrupted update, propose (and write) new
references, show every figure's band and its source."""

import argparse
import os
import sys

from clusterbench.cli import common, numbers
from clusterbench.core import paths
from clusterbench.core.controlchars import escaped
from clusterbench.core.errors import ClusterbenchError, reader_may_leave
from clusterbench.judging import disturbed, selection, verdict
from clusterbench.references import bandtable
from clusterbench.references import directory as refdir
from clusterbench.references import floors as reffloors
from clusterbench.references import provenance as refprov
from clusterbench.references import store as refstore
from clusterbench.references import update as refupdate
from clusterbench.references import validate as refdata
from clusterbench.results import samples
from clusterbench.sessions import baseline


def check(args):
    args.references = args.references or args.old_directory
    root = common.references(args)
    site_configs = args.site_configs or paths.default('site_configs')
    checks = args.checks or paths.default('checks')
    # An interrupted update is named below, with what repair will do.
    for path, tests in refdata.check_directory(root, interrupted_ok=True).items():
        figures = sum(tests.values())
        print(
            f'{escaped(path)}: {len(tests)} test(s), {figures} reference figure(s): ok'
        )
    problems, interrupted, others, wide = [], [], [], []
    # Everything is checked per system directory: each has its own files,
    # provenance and update journal.
    for system in refdir.systems(root):
        directory = os.path.join(root, system)
        problems += [
            f'stale: {p}'
            for p in refdata.stale_entries(directory, site_configs, checks)
        ]
        with refstore.shared_lock(directory):
            stopped = refstore.interrupted(directory)
            problems += [
                f'inconsistent: {p}' for p in refprov.inconsistencies(directory)
            ]
        interrupted += stopped
        # References of another kind of machine are no error: they apply there.
        others += refdata.unmatched_kinds(directory, site_configs)
        wide += refdata.wide_tolerances(directory, args.max_tolerance)
    problems += [f'interrupted update: {line}' for line in interrupted]
    if interrupted:
        problems.append('run `clusterbench references repair`')
    # Keys and paths from the files: their control characters escaped.
    for problem in problems:
        print(escaped(problem))
    if not problems:
        print(f'{escaped(root)}: every reference entry matches its provenance: ok')
    for other in others:
        print(f'other machine: {escaped(other)}')
    for warning in wide:
        print(f'warning: {escaped(warning)}')
    if wide:
        print(
            f'{len(wide)} figure(s) with a tolerance above '
            f'{args.max_tolerance * 100:.0f} % (--max-tolerance)'
        )
    return 1 if problems else 0


def repair(args):
    root = common.references(args, written=True)
    if not os.path.isdir(root):
        raise ClusterbenchError(f'{root}: no such reference directory')
    done, problems = [], []
    for system in refdir.systems(root):
        directory = os.path.join(root, system)
        done += refstore.repair_if_interrupted(directory)
        problems += refprov.inconsistencies(directory)
    for line in done or [f'{root}: no interrupted update: nothing to repair']:
        print(line)
    for problem in problems:
        print(f'inconsistent (not repairable here): {problem}')
    return 1 if problems else 0


def update(args):
    directory = common.references(args, written=True)
    left_out = disturbed.LeftOut()
    groups = samples.collect(args.reports, left_out)
    by_kind = args.floor == KIND
    proposals = refupdate.propose(
        groups,
        floor=reffloors.MINIMUM if by_kind else args.floor,
        k=args.k,
        min_samples=args.min_samples,
        one_sided=args.one_sided,
        # Short of sessions, a figure gets its kind's floor whatever is asked.
        floor_for=reffloors.floor_for if by_kind else baseline.floor_when_short,
    )
    for line in left_out.lines():
        print(line)
    if not proposals:
        raise ClusterbenchError(
            f'no figure has {args.min_samples} samples or more: nothing to update'
        )
    # Baseline's rule of three sessions, said as baseline says it.
    short = baseline.shortfall(baseline.Baseline(args.reports, proposals, left_out))
    refused = short and args.write and not args.force
    # An update rolls an interrupted one forward (or back) before it reads
    # the files; a dry run only reads them, and refuses a half-applied one.
    write = args.write and not refused
    notes = refupdate.repair_first(proposals, directory) if write else []
    for line in refupdate.diff(proposals, directory):
        print(line)
    if refused:
        raise ClusterbenchError(
            f'references update: {short}; {baseline.MIN_SESSIONS} are needed: give '
            'more sessions to --from (`clusterbench baseline` records them), or '
            'write these with --force; nothing was written'
        )
    # (The names come from the reports: their control characters escaped.)
    if short and args.write:
        print(
            f'warning: references update: {escaped(short)}; written with --force, '
            'each band at least the floor of its kind of figure'
        )
    elif short:
        print(
            f'warning: references update: {escaped(short)}; --write refuses them '
            'without --force'
        )
    if args.write:
        written = refupdate.write(
            proposals, directory, args.reports, results=args.results, notes=notes
        )
        for line in notes:
            print(line)
        for path in written:
            print(f'wrote {path}')
        for line in baseline.wide_lines(proposals, directory):
            print(line)
    else:
        print('\n(dry run: nothing written; add --write to apply)')
    return 0


def demote_wide(args):
    root = common.references(args, written=args.write)
    if not os.path.isdir(root):
        raise ClusterbenchError(f'{root}: no such reference directory')
    lines = refupdate.demote_wide(root, write=args.write)
    for line in lines or [f'{root}: no band wider than ±100 %: nothing to do']:
        print(escaped(line))
    if not args.write:
        print('\n(dry run: nothing written; add --write to apply)')
    return 0


def show(args):
    root = refdir.resolve(args.references)
    if args.system is not None:
        selection.check_system_name(args.system)
    site_configs = args.site_configs or paths.default('site_configs')
    table = bandtable.rows(root, args.system, site_configs)
    # Said once the table stands, so that an error stays one line; beside
    # CSV or JSON on stderr, which keeps stdout the table alone.
    with reader_may_leave():
        refdir.announce(root, sys.stdout if args.format == 'table' else sys.stderr)
        print(bandtable.render(table, args.format, root))
    return 0


KIND = 'kind'


_floor = numbers.Number('a relative tolerance (e.g. 0.05)', 0, 1, words=(KIND,))


def add_parser(sub):
    refs = sub.add_parser('references', help='work with reference_data/<system>/')
    refs_sub = refs.add_subparsers(dest='action', required=True)
    chk = refs_sub.add_parser('check', help='validate every reference file')
    common.add_references(chk)
    # `references check DIR`, the old spelling, kept working.
    chk.add_argument('old_directory', nargs='?', help=argparse.SUPPRESS)
    chk.add_argument(
        '--site-configs', help=f'default: site_configs/ here, else {common.OURS}'
    )
    chk.add_argument('--checks', help=common.CHECKS_HELP)
    chk.add_argument(
        '--max-tolerance',
        type=numbers.CHANGE,
        default=verdict.DETECTION_THRESHOLD,
        metavar='FRACTION',
        help='warn for each figure whose tolerance on its bad side is wider '
        '(default 0.10: a 10 %% regression must be detectable)',
    )
    chk.set_defaults(func=check)
    fix = refs_sub.add_parser(
        'repair',
        help='complete (roll forward) or undo (roll back) an interrupted '
        '`references update --write`',
    )
    common.add_references(fix, help=common.WRITTEN_REFERENCES_HELP)
    fix.set_defaults(func=repair)
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
    common.add_references(upd, help=common.WRITTEN_REFERENCES_HELP)
    upd.add_argument(
        '--results',
        default='results',
        help='results root: provenance stores report paths relative to it '
        '(default: results)',
    )
    upd.add_argument(
        '--floor',
        type=_floor,
        default=KIND,
        help='smallest relative tolerance (e.g. 0.03), or "kind" (default): the '
        'floor of each kind of figure, learnt from the spread between sessions, '
        'as `clusterbench baseline` uses it (see docs/baseline.md); a figure '
        f'that fewer than {baseline.MIN_SESSIONS} sessions back always gets '
        "its kind's",
    )
    upd.add_argument(
        '--k',
        type=numbers.MULTIPLE,
        default=3.0,
        help='tolerance = max(floor, k x robust relative spread of the '
        'per-session medians, reach to the farthest session median + floor) '
        '(default 3)',
    )
    upd.add_argument(
        '--min-samples',
        type=numbers.Number('a number of samples', 1, 10**6, whole=True),
        default=1,
    )
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
        'default: only show it. A band wider than ±100 %% is written as '
        'context only (no band; see docs/references.md)',
    )
    upd.add_argument(
        '--force',
        action='store_true',
        help=f'write even when a figure has fewer than {baseline.MIN_SESSIONS} '
        'undisturbed sessions (as `clusterbench baseline --force`)',
    )
    upd.set_defaults(func=update)
    wide = refs_sub.add_parser(
        'demote-wide',
        help='take every band wider than ±100 %% out of the reference files: '
        'its figure stays context only, its provenance says what the band '
        'would be (see docs/references.md); write only with --write',
    )
    common.add_references(wide, help=common.WRITTEN_REFERENCES_HELP)
    wide.add_argument(
        '--write', action='store_true', help='write (default: only show them)'
    )
    wide.set_defaults(func=demote_wide)
    shw = refs_sub.add_parser(
        'show',
        help="every figure's band and its source: the references (sessions, "
        'dates, spread between them) and the portable figures (default band '
        'or site override)',
    )
    common.add_references(shw)
    shw.add_argument(
        '--system', help='only this system (or system:partition); default: all'
    )
    shw.add_argument(
        '--site-configs',
        help='where site overrides of portable bands are read (default: '
        'site_configs here, else the packaged ones)',
    )
    shw.add_argument('--format', choices=('table', 'csv', 'json'), default='table')
    shw.set_defaults(func=show)

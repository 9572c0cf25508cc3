"""`clusterbench run`: a ReFrame session on one system, then the verdict table."""

import os
import runpy
import shlex
import sys
import time

from clusterbench import refdata, reframe_output, runreport, sessionreport, verdict
from clusterbench.errors import ClusterbenchError


def session_dir(results, system):
    """A new directory for this session; earlier sessions are never reused."""
    stamp = time.strftime('%Y%m%dT%H%M%S')
    base = os.path.join(results, system.replace(':', '-'), stamp)
    path, n = base, 1
    while True:
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            n += 1
            path = f'{base}-{n}'


def reframe_command(config, checks, system, prefix, report, extra=()):
    return [
        'reframe',
        '-C',
        config,
        '-c',
        checks,
        '--system',
        system,
        '--prefix',
        prefix,
        '--report-file',
        report,
        '--save-log-files',
        *extra,
        '-r',
    ]


def _partitions(config, system):
    """The partitions of *system* (``name`` or ``name:partition``) in *config*."""
    try:
        site = runpy.run_path(config)['site_configuration']
    except Exception:  # noqa: BLE001 - ReFrame reports a broken config itself
        return []
    name, _, part = system.partition(':')
    for entry in site.get('systems', []):
        if entry.get('name') == name:
            return [
                p for p in entry.get('partitions', []) if not part or p['name'] == part
            ]
    return []


def policy_options(config, system, extra=()):
    """``--exec-policy=serial`` where builds would share the node with runs.

    With the ``local`` scheduler every job runs on this host, and ReFrame
    builds (locally) while another test's benchmark runs: a compile beside a
    benchmark corrupts its figure. One test at a time there; a batch
    partition keeps ReFrame's concurrent default. An explicit
    ``--exec-policy`` in *extra* wins.
    """
    if any(arg.startswith('--exec-policy') for arg in extra):
        return []
    partitions = _partitions(config, system)
    if partitions and all(p.get('scheduler') == 'local' for p in partitions):
        return ['--exec-policy=serial']
    return []


def run(config, checks, system, results, references, extra=(), out=sys.stdout):
    for path, what in ((config, 'site config'), (checks, 'check directory')):
        if not os.path.exists(path):
            raise ClusterbenchError(
                f'{path}: no such {what} (run from the project root or pass its path)'
            )
    refdata.check_directory(references)
    prefix = session_dir(results, system)
    report = os.path.join(prefix, 'report.json')
    extra = [*policy_options(config, system, extra), *extra]
    cmd = reframe_command(config, checks, system, prefix, report, extra)
    reframe = os.path.join(os.path.dirname(sys.executable), 'reframe')
    print('$ ' + shlex.join(cmd), file=out, flush=True)
    ran = reframe_output.run(
        [reframe if os.path.exists(reframe) else 'reframe', *cmd[1:]]
    )
    status = ran.status
    data = _session_report(report, prefix, ran)
    if not data['session_info'].get('num_cases'):
        why = (
            '; '.join(ran.not_loaded)
            or 'a check file that failed to load is reported above'
        )
        raise ClusterbenchError(f'{report}: no test ran on {system} ({why})')
    figures, failures = runreport.extract(data, report)
    table = verdict.rows(verdict.group(figures), failures)
    print(f'\nResults: {prefix}\n', file=out)
    print(verdict.format_table(table), file=out)
    summary = verdict.summary(table)
    if ran.not_loaded:
        summary += f', {len(ran.not_loaded)} not loaded'
    print(f'\n{summary}', file=out)
    for line in ran.not_loaded:
        print(f'not loaded: {line}', file=out)
    if ran.no_space:
        print(f'incomplete: {prefix}: {NO_SPACE_TEXT} ({ran.no_space[0]})', file=out)
    details = sessionreport.text([report])
    if details:
        print(f'\n{details}', file=out)
    trouble = ran.not_loaded or ran.no_space
    return 1 if verdict.anything_wrong(table) or status or trouble else 0


NO_SPACE_TEXT = 'no space left on device'


def _session_report(report, prefix, ran):
    """The session's report, or one line saying why there is none."""
    try:
        return runreport.load(report)
    except ClusterbenchError:
        if ran.no_space:
            # ReFrame leaves a torn (often empty) report behind: not a result.
            _remove(report)
            raise ClusterbenchError(
                f'{report}: not written: {NO_SPACE_TEXT} ({prefix})'
            ) from None
        if os.path.exists(report):
            raise
    _remove_if_empty(prefix)
    if ran.stopped:
        raise ClusterbenchError(f'ReFrame stopped (exit {ran.status}): {ran.stopped}')
    raise ClusterbenchError(
        f'ReFrame wrote no report (exit {ran.status}); see its error above'
    )


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _remove_if_empty(path):
    try:
        os.rmdir(path)
    except OSError:
        pass

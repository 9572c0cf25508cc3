"""`clusterbench run`: a ReFrame session on one system, then the verdict table."""

import os
import shlex
import subprocess
import sys
import time

from clusterbench import refdata, runreport, sessionreport, verdict
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


def run(config, checks, system, results, references, extra=(), out=sys.stdout):
    for path, what in ((config, 'site config'), (checks, 'check directory')):
        if not os.path.exists(path):
            raise ClusterbenchError(
                f'{path}: no such {what} (run from the project root or pass its path)'
            )
    refdata.check_directory(references)
    prefix = session_dir(results, system)
    report = os.path.join(prefix, 'report.json')
    cmd = reframe_command(config, checks, system, prefix, report, extra)
    reframe = os.path.join(os.path.dirname(sys.executable), 'reframe')
    print('$ ' + shlex.join(cmd), file=out, flush=True)
    status = subprocess.call(
        [reframe if os.path.exists(reframe) else 'reframe', *cmd[1:]]
    )
    if not os.path.exists(report):
        _remove_if_empty(prefix)
        raise ClusterbenchError(
            f'ReFrame wrote no report (exit {status}); see its error above'
        )
    data = runreport.load(report)
    if not data['session_info'].get('num_cases'):
        raise ClusterbenchError(
            f'{report}: no test ran on {system} (a check file '
            f'that failed to load is reported above)'
        )
    figures, failures = runreport.figures_and_failures(report)
    table = verdict.rows(verdict.group(figures), failures)
    print(f'\nResults: {prefix}\n', file=out)
    print(verdict.format_table(table), file=out)
    print(f'\n{verdict.summary(table)}', file=out)
    details = sessionreport.text([report])
    if details:
        print(f'\n{details}', file=out)
    return 1 if verdict.anything_wrong(table) or status else 0


def _remove_if_empty(path):
    try:
        os.rmdir(path)
    except OSError:
        pass

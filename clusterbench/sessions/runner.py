"""`clusterbench run`: a ReFrame session on one system, judged.

:func:`run` streams ReFrame's output (and the confirmation runs') as the
session goes, and returns a :class:`Session`; the command prints its table
and decides its exit code (:mod:`clusterbench.cli.run`).
"""

import dataclasses
import os
import runpy
import shlex
import sys
import time

from clusterbench.core import outputpath, scriptnames
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import selection, verdict
from clusterbench.noisyhost import confirm, sessionvars, switch
from clusterbench.references import directory as refdir
from clusterbench.references import validate as refdata
from clusterbench.results import (
    guide,
    judgedsession,
    plausibility,
    retries,
    runreport,
    suggested,
)
from clusterbench.sessions import nodelock, reframe_output
from clusterbench.site import contract

#: Where ReFrame's results database and perflogs of a session go: its
#: results root (read by site_configs/common.py).
RESULTS_ENV = 'CLUSTERBENCH_RESULTS'
#: ReFrame of this Python's environment, else the one on PATH.
REFRAME = os.path.join(os.path.dirname(sys.executable), 'reframe')
REFRAME = REFRAME if os.path.exists(REFRAME) else 'reframe'


def results_root(results):
    """*results* as a real path, if a session can write there; else one line.

    Resolved because ReFrame compares the paths under its prefix as given
    with their real paths: under a symlink every test fails in cleanup
    ("... are the same file"). Checked before anything runs.
    """
    outputpath.check(results)  # too long, or under a file
    real = os.path.realpath(results)
    existing = real
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        where = '' if existing == real else f' ({existing} is a file)'
        raise ClusterbenchError(f'{results}: not a directory{where}')
    why = _not_writable(existing)
    if why:
        raise ClusterbenchError(f'{results}: not writable ({why})')
    return real


def _not_writable(directory):
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return 'read-only file system'
    except OSError as err:
        return err.strerror.lower()
    if not os.access(directory, os.W_OK | os.X_OK):
        return 'permission denied'
    return ''


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


def _site(config):
    """*config*'s ``site_configuration``, or None if it does not load (ReFrame
    says why). A name in it that would reach a job script as a command (a
    module ``a;b``, an access option) is one line naming it, before any job,
    and so is an ``extras`` key or value the site contract does not know."""
    try:
        site = runpy.run_path(config)['site_configuration']
    except ClusterbenchError:
        raise  # common.py's builders refused a name, at the config's line
    except Exception:  # noqa: BLE001 - ReFrame reports a broken config itself
        return None
    if not isinstance(site, dict):
        return None
    found = scriptnames.config_problem(site)
    if found:
        raise ClusterbenchError(f'{config}: {found}')
    contract.check_site(site, config)
    return site


def _system_entry(config, name):
    """The entry of system *name* in *config*, or None."""
    site = _site(config)
    if site is None:
        return None
    return next((e for e in site.get('systems', []) if e.get('name') == name), None)


def _partitions(config, system):
    """The partitions of *system* (``name`` or ``name:partition``) in *config*."""
    name, _, part = system.partition(':')
    entry = _system_entry(config, name) or {}
    return [p for p in entry.get('partitions', []) if not part or p['name'] == part]


def _check_partition(config, system):
    """One line naming a partition *config* does not have (ReFrame's own error
    names neither the file nor the partitions there are)."""
    name, _, part = system.partition(':')
    entry = _system_entry(config, name)
    if not part or entry is None:
        return
    names = [p['name'] for p in entry.get('partitions', [])]
    if part not in names:
        raise ClusterbenchError(
            f'--system {system}: {name} has no partition {part} in {config} '
            f'(it has {", ".join(names)})'
        )


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
    if partitions and all(contract.runs_here(p) for p in partitions):
        return ['--exec-policy=serial']
    return []


def noisy_host_partitions(config, system):
    """The names of *system*'s partitions with the noisy-host profile on."""
    found = []
    for part in _partitions(config, system):
        try:
            if switch.enabled(part):
                found.append(part['name'])
        except ClusterbenchError as err:
            raise ClusterbenchError(
                f'{config}: partition {part["name"]}: {err}'
            ) from None
    return found


def node_lock(config, system, wait=True):
    """This node's lock, taken, if a partition of *system* runs its jobs here
    (``local`` scheduler): one measuring session at a time; else ``None``."""
    if not any(contract.runs_here(p) for p in _partitions(config, system)):
        return None
    lock = nodelock.NodeLock()
    lock.acquire(wait=wait)
    return lock


def check_inputs(config, checks, systems, references=None):
    """One line for the first thing a measuring session on *systems* could
    not run with: a system name, the site config or check directory, a
    partition the config does not have, an ``extras`` key the site contract
    does not know, the reference directory."""
    for system in systems:
        selection.check_system_name(system)
    for path, what in ((config, 'site config'), (checks, 'check directory')):
        if not os.path.exists(path):
            raise ClusterbenchError(
                f'{path}: no such {what} (run from the project root or pass its path)'
            )
    _site(config)
    for system in systems:
        _check_partition(config, system)
    if references is not None:
        refdata.check_directory(references)


@dataclasses.dataclass
class Launch:
    """A measuring session about to run ReFrame: its new directory, the
    environment ReFrame runs in and the node lock it holds (or None)."""

    prefix: str
    env: dict
    lock: object

    def reframe(self, cmd, out):
        """Run *cmd* (a :func:`reframe_command`) as this session. The
        run-conditions switches (``-S probe_host=false``) reach the checks
        through the environment: with ``-S``, ReFrame warns about each
        fixture that lacks them (noisyhost.sessionvars)."""
        args, switches = sessionvars.translate(cmd[1:])
        env = {**self.env, **switches}
        return _reframe([REFRAME, *args], out, env, self.lock)


def start(config, system, results, references, out=sys.stdout, wait=True):
    """The :class:`Launch` of a session on *system* (inputs checked by
    :func:`check_inputs`): the results root checked, the references
    announced on *out*, this node's lock taken if *system* runs here, the
    session directory made. The caller releases ``lock``."""
    results = results_root(results)
    # ReFrame must judge against the directory just validated, not its own
    # default: one directory decides both. Its database and perflogs go under
    # the results root too (site_configs/common.py reads RESULTS_ENV).
    env = {
        **os.environ,
        refdir.ENV: os.path.abspath(references),
        RESULTS_ENV: results,
    }
    refdir.announce(references, out)
    lock = node_lock(config, system, wait)
    return Launch(session_dir(results, system), env, lock)


@dataclasses.dataclass
class Session:
    """A judged session: where it is, its verdict table, the reports it was
    judged from, and what went wrong beyond its figures."""

    directory: str
    table: list
    reports: list
    #: ReFrame's reasons for check files or tests that did not load.
    not_loaded: list
    #: The first output not saved for want of space, or ''.
    no_space: str
    #: ReFrame failed a session for more than figures (see _failed_otherwise).
    failed_otherwise: bool
    #: Why ReFrame could not store the session in its results database, or ''.
    not_stored: str = ''
    #: Lines to show under the table (what to do about what it shows).
    notes: list = dataclasses.field(default_factory=list)


def run(
    config,
    checks,
    system,
    results,
    references,
    extra=(),
    out=sys.stdout,
    wait=True,
    # Seconds; like confirmation runs, only on partitions with the noisy-host
    # profile (elsewhere one line says it is off, and nothing waits).
    wait_quiet=0.0,
    threshold=verdict.DETECTION_THRESHOLD,
    confirm_runs=confirm.DEFAULT_RUNS,
    reports=None,
    # Seconds the confirmation runs wait, at most, for a quiet machine.
    confirm_wait=confirm.DEFAULT_WAIT,
):
    """Run the suite on *system* with ReFrame, as it goes printing to *out*
    what runs; the judged :class:`Session`, or one line (ClusterbenchError).
    The session's report path is appended to *reports* (a list), when given,
    as soon as the session has its directory."""
    check_inputs(config, checks, [system], references)
    # What a suggested `clusterbench baseline` repeats: the run as asked.
    asked = suggested.of(system, config, checks, results, references, wait_quiet, extra)
    noisy = noisy_host_partitions(config, system)
    launch = start(config, system, results, references, out, wait)
    prefix, lock = launch.prefix, launch.lock
    report = os.path.join(prefix, 'report.json')
    if reports is not None:
        reports.append(report)
    extra = [*policy_options(config, system, extra), *extra]
    if wait_quiet and noisy:
        # The checks' hook waits before each test on a local partition.
        extra = ['-S', f'wait_quiet={wait_quiet:g}', *extra]
    elif wait_quiet:
        print(f'--wait-quiet: not waiting, {switch.off(system)}', file=out)
    cmd = reframe_command(config, checks, system, prefix, report, extra)
    print('$ ' + shlex.join(cmd), file=out, flush=True)
    try:
        if lock:
            lock.record(f'pid {os.getpid()}, session {prefix}')
        ran = launch.reframe(cmd, out)
        data = _session_report(report, prefix, ran, config, system, extra)
        if not data['session_info'].get('num_cases'):
            why = (
                '; '.join(ran.not_loaded)
                or 'a check file that failed to load is reported above'
            )
            raise ClusterbenchError(f'{report}: no test ran on {system} ({why})')
        # Judged as `compare` judges the stored session (results.judgedsession):
        # the first run, then with its confirmation runs' reports.
        session = judgedsession.add(judgedsession.Loaded([], [], [], [], []),
                                    data, report)  # fmt: skip
        judged, table = judgedsession.judge(session, threshold=threshold)
        failed_otherwise = _failed_otherwise(ran, data)
        # Every figure that fails the run, portable ones too, is confirmed.
        red = confirm.red_cases(table, runreport.cases(data, report))
        quiet = {where: cases for where, cases in red.items() if where[1] in noisy}
        if red and confirm_runs and not quiet:
            print(f'\nConfirmation runs: none, {switch.off(system)}', file=out)
        red = quiet
        why_not = confirm.unsupported(extra)
        if red and confirm_runs and why_not:
            print(f'\nConfirmation runs: {why_not}', file=out)
        elif red and confirm_runs:
            first = table
            recorded = len(session.figures), len(session.portable)
            confirm.wait_until_quiet(confirm_wait, out)
            trouble = _confirmation_sessions(
                red,
                confirm_runs,
                (config, checks, extra, launch),
                out,
                session,
            )
            failed_otherwise |= bool(trouble)
            judged, table = judgedsession.judge(session, threshold=threshold)
            more = [
                *session.figures[recorded[0] :],
                *session.portable[recorded[1] :],
            ]
            summary = confirm.summary(first, table, confirm_runs, more, trouble)
            print(f'\n{summary}', file=out)
    finally:
        if lock:
            lock.release()
    return Session(
        directory=prefix,
        table=table,
        reports=session.reports,
        not_loaded=ran.not_loaded,
        no_space=ran.no_space[0] if ran.no_space else '',
        failed_otherwise=failed_otherwise,
        not_stored=ran.not_stored,
        notes=[
            *plausibility.lines(session.reports),
            *guide.lines(judged, runreport.cases(data, report), references, asked),
            *_not_sent(ran),
        ],
    )


def _not_sent(ran):
    """The line saying the site's time-series store missed the session (the
    figures are judged and kept here all the same: report, database and
    perflog files)."""
    if not ran.not_sent:
        return []
    return [f'{ran.not_sent}: the time-series store missed this session']


def _reframe(argv, out, env, lock):
    """ReFrame run as *argv*: it holds the node *lock* with this session (it
    inherits the locked file), and it is recorded there as measuring."""
    if not lock:
        return reframe_output.run(argv, out=out, env=env)
    return reframe_output.run(
        argv, out=out, env=env, keep_fds=lock.inheritable(), started=lock.measuring
    )


def _confirmation_sessions(red, runs, session, out, judged):
    """Run the test cases *red* (see confirm.red_cases) *runs* more times, one
    ReFrame session per partition and environment, each report added to
    *judged* (a judgedsession.Loaded); return what went wrong beyond figures:
    a set of confirm.NO_REPORT, confirm.SESSION_FAILED."""
    config, checks, extra, launch = session
    failed = set()
    for (system, partition, environ), hashes in sorted(red.items()):
        sub = confirm.directory(launch.prefix, system, partition, environ)
        os.makedirs(sub, exist_ok=True)
        report = os.path.join(sub, 'report.json')
        args = confirm.session_args(extra, hashes, environ, runs)
        where = f'{system}:{partition}'
        cmd = reframe_command(config, checks, where, sub, report, args)
        print(f'\n$ {shlex.join(cmd)}', file=out, flush=True)
        ran = launch.reframe(cmd, out)
        try:
            data = runreport.load(report)
        except ClusterbenchError as err:
            print(f'confirmation runs: {err}', file=out)
            failed.add(confirm.NO_REPORT)
            continue
        # Its figures, portable ones too, join the first run's: one row each.
        judgedsession.add(judged, data, report)
        if _failed_otherwise(ran, data):
            failed.add(confirm.SESSION_FAILED)
    return failed


def _failed_otherwise(ran, data):
    """ReFrame failed the session for more than figures (see below)."""
    return bool(ran.status) and not _only_performance_failures(data)


def _only_performance_failures(data):
    """ReFrame's own exit status is not ours where it failed only figures.

    ReFrame fails a test whose figure is outside its band on either side; our
    verdicts judge those figures with their direction (FASTER is no failure).
    Any other failure, or a failed session with none recorded, still counts;
    an attempt a retry replaced does not (with --reruns ReFrame counts it).
    """
    failed = [
        case
        for case in runreport.cases(data)
        if case.get('result') not in ('pass', 'xfail', 'skip')
    ]
    tries = retries.attempts(data)
    counted = [case for case in failed if not retries.superseded(tries, case)]
    return bool(failed) and all(c.get('fail_phase') == 'performance' for c in counted)


NO_SPACE_TEXT = 'no space left on device'


def _session_report(report, prefix, ran, config, system, extra):
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
    if ran.status == 0:
        environs = {
            e for p in _partitions(config, system) for e in p.get('environs', [])
        }
        raise ClusterbenchError(selection.nothing_selected(system, environs, extra))
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

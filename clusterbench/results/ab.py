"""`clusterbench ab`: two configurations measured in turn (ABBA, BAAB) in one session.

Each leg is one ReFrame session of ``clusterbench run``'s runner (the same
command line, lock, environment and results root) in a directory of its own
under the A/B session: ``<results>/<system>/<stamp>/01-A/report.json``,
``02-B/``, ``03-B/``, ``04-A/``, ... ``ab.json`` beside them records the two
configurations and every leg as it ends, so that an interrupted session
keeps what it measured and any session can be judged again from its stored
reports (``clusterbench ab --judge DIR``).
"""

import json
import os
import shlex
import sys
from dataclasses import asdict, dataclass

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import paired
from clusterbench.results import runner, runreport

PLAN = 'ab.json'


@dataclass
class Arm:
    """One configuration: the system (or system:partition) and the ReFrame
    options that make it what it is (``-p ENV``, ``-S name=value``, ...)."""

    system: str
    args: list


def legs(repeats):
    """``[(block, arm), ...]``: *repeats* blocks, ABBA and BAAB in turn."""
    return [
        (block, arm) for block in range(repeats) for arm in paired.block_order(block)
    ]


def run(
    config,
    checks,
    arms,
    results,
    references,
    repeats,
    extra=(),
    out=sys.stdout,
    wait=True,
):
    """Run *arms* (A, B) in *repeats* blocks; return the session directory."""
    systems = [arm.system for arm in arms.values()]
    runner.check_inputs(config, checks, systems, references)
    launch = runner.start(config, arms[paired.A].system, results, references, out, wait)
    prefix, lock = launch.prefix, launch.lock
    plan = {
        'config': config,
        'checks': checks,
        'repeats': repeats,
        'extra': list(extra),
        'arms': {name: asdict(arm) for name, arm in arms.items()},
        'legs': [],
    }
    try:
        _save(prefix, plan)
        for i, (block, name) in enumerate(legs(repeats)):
            arm = arms[name]
            sub = os.path.join(prefix, f'{i + 1:02d}-{name}')
            report = os.path.join(sub, 'report.json')
            args = [
                *runner.policy_options(config, arm.system, extra),
                *extra,
                *arm.args,
            ]
            cmd = runner.reframe_command(config, checks, arm.system, sub, report, args)
            print(
                f'\n[{name}, block {block + 1}/{repeats}] $ {shlex.join(cmd)}',
                file=out,
                flush=True,
            )
            if lock:
                lock.record(f'pid {os.getpid()}, A/B session {prefix}')
            ran = launch.reframe(cmd, out)
            leg = {
                'arm': name,
                'block': block,
                'report': os.path.relpath(report, prefix),
                'status': ran.status,
            }
            plan['legs'].append(leg)
            _save(prefix, plan)
            if not os.path.exists(report) and i == 0:
                raise ClusterbenchError(
                    f'{report}: ReFrame wrote no report for A '
                    f'({shlex.join(arm.args)}); see its output above'
                )
    finally:
        if lock:
            lock.release()
    return prefix


def _save(prefix, plan):
    tmp = os.path.join(prefix, f'.{PLAN}.tmp')
    with open(tmp, 'w') as f:
        json.dump(plan, f, indent=1)
    os.replace(tmp, os.path.join(prefix, PLAN))


def load(prefix):
    """The plan of a stored A/B session, its samples (paired.Sample), the
    legs without a report (left out) and the failed test cases of the legs
    (arm, runreport.Failure; skipped tests are not failures)."""
    path = os.path.join(prefix, PLAN)
    try:
        with open(path) as f:
            plan = json.load(f)
        stored = [
            (leg['arm'], int(leg['block']), leg['report']) for leg in plan['legs']
        ]
    except FileNotFoundError:
        raise ClusterbenchError(f'{path}: no such file (not an A/B session)') from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ClusterbenchError(f'{path}: not an A/B plan ({err})') from None
    samples, missing, failed = [], [], []
    for arm, block, report in stored:
        report = os.path.join(prefix, report)
        if not os.path.exists(report):
            missing.append(report)
            continue
        figures, failures = runreport.extract(runreport.load(report), report)
        failed += [(arm, f) for f in failures if f.phase != runreport.SKIPPED]
        _one_configuration(figures, report)
        samples += [
            paired.Sample(arm, block, f.test, f.variable, f.unit, f.value, f.disturbed)
            for f in figures
        ]
    return plan, samples, missing, failed


def _one_configuration(figures, report):
    """Each test must run in one partition and environment per arm, else its
    A and B figures cannot be paired."""
    seen = {}
    for f in figures:
        where = (f.system, f.partition, f.environ)
        if seen.setdefault(f.test, where) != where:
            raise ClusterbenchError(
                f'{report}: {f.test} ran in more than one partition or environment; '
                'select one per arm (-p ENV, --system SYSTEM:PARTITION)'
            )

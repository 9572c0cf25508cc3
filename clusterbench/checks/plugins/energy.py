"""Energy to solution for any check, where the node exposes it.

A sampler (``python -m clusterbench.cli.energy sample``) runs in the background
of the job script around the benchmark, on the node that runs the script,
and reads powercap/RAPL counters or the IPMI DCMI power every
``energy_interval`` seconds (often enough to see every RAPL counter wrap).
Where something is exposed, ``energy_j`` (J) and ``mean_power_w`` (W) become
performance variables; where nothing is, ReFrame's output says so once per
session and the check records nothing. The samples are kept with the
results, and their digest goes into the run report as ``energy_summary``.
"""

import os
import shlex
import sys

import reframe.utility.sanity as sn
from reframe.core.logging import getlogger

from clusterbench.machine import energy
from clusterbench.parsers import declarations

SAMPLES_FILE = 'energy.jsonl'
#: The figures a node that exposes energy adds to every check.
FIGURES = (declarations.ENERGY, declarations.MEAN_POWER)

_told = set()


def sampler_commands(output, python=sys.executable, interval=2.0, root='/'):
    """Job-script lines: start the sampler, wait for its first reading."""
    output = shlex.quote(output)
    sampler = (
        f'env -u LD_PRELOAD {shlex.quote(python)} -m clusterbench.cli.energy '
        f'--root {shlex.quote(root)} sample -o {output} --interval {interval}'
    )
    return [
        f'{sampler} &',
        '_cb_energy=$!',
        f'while [ ! -s {output} ] && kill -0 $_cb_energy 2>/dev/null; '
        'do sleep 0.05; done',
    ]


# Keeps the benchmark's exit status as the script's (ReFrame's job exit code).
STOP_COMMAND = (
    '_cb_rc=$?; kill -TERM $_cb_energy 2>/dev/null; wait $_cb_energy 2>/dev/null; '
    '(exit $_cb_rc)'
)


def say_once(summary):
    """Log that energy is not available, once per host and reason."""
    key = (summary.get('host'), summary.get('reason'))
    if key not in _told:
        _told.add(key)
        where = f' on {key[0]}' if key[0] else ''
        getlogger().info(f'energy: not available{where}: {key[1]}; nothing recorded')


def start_sampler(check):
    """Before run (last): the job script samples around the benchmark."""
    if not check.measure_energy:
        return
    check.prerun_cmds = [
        *check.prerun_cmds,
        *sampler_commands(
            os.path.join(check.stagedir, SAMPLES_FILE),
            interval=check.energy_interval,
            root=check.energy_sysfs_root,
        ),
    ]
    check.postrun_cmds = [STOP_COMMAND, *check.postrun_cmds]
    check.keep_files = [*check.keep_files, SAMPLES_FILE]


def read(check):
    """Before sanity: what the sampler found into ``energy_summary``."""
    if check.measure_energy:
        check.energy_summary = energy.summarize_file(
            os.path.join(check.stagedir, SAMPLES_FILE)
        )


def add_figures(check):
    """Before performance: energy and mean power, where the node has them."""
    if not check.measure_energy:
        return
    summary = check.energy_summary
    if not summary.get('available'):
        say_once(summary)
        return
    for figure in FIGURES:
        check.perf_variables[figure.name] = sn.make_performance_function(
            sn.defer(summary[figure.name]), figure.unit
        )

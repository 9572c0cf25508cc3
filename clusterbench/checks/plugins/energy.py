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

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, variable
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


class EnergyMeasurement(rfm.RegressionTestPlugin):
    """Energy to solution and mean power of the job, where the node has them."""

    #: Sample energy around the benchmark (on by default).
    measure_energy = variable(bool, value=True)
    #: Seconds between readings.
    energy_interval = variable(float, value=2.0)
    #: File system root of /sys (tests point it at a canned tree).
    energy_sysfs_root = variable(str, value='/')
    #: What the sampler found, kept in the run report.
    energy_summary = variable(typ.Dict[str, object], value={})

    @run_before('run', always_last=True)
    def _start_energy_sampler(self):
        if not self.measure_energy:
            return
        self.prerun_cmds = [
            *self.prerun_cmds,
            *sampler_commands(
                os.path.join(self.stagedir, SAMPLES_FILE),
                interval=self.energy_interval,
                root=self.energy_sysfs_root,
            ),
        ]
        self.postrun_cmds = [STOP_COMMAND, *self.postrun_cmds]
        self.keep_files = [*self.keep_files, SAMPLES_FILE]

    @run_before('sanity')
    def _read_energy(self):
        if self.measure_energy:
            self.energy_summary = energy.summarize_file(
                os.path.join(self.stagedir, SAMPLES_FILE)
            )

    @run_before('performance', always_last=True)
    def _add_energy_figures(self):
        if not self.measure_energy:
            return
        summary = self.energy_summary
        if not summary.get('available'):
            say_once(summary)
            return
        for figure in FIGURES:
            self.perf_variables[figure.name] = sn.make_performance_function(
                sn.defer(summary[figure.name]), figure.unit
            )

"""The facts of each node a job ran on, recorded with every run.

Just before the benchmark, the job script runs ``python -m clusterbench.cli.hwinfo``
on every node of the job (through the job's own launcher when it spans
several nodes; the first process on a node writes, the others see the file
and stop). The facts land in ``hwinfo/<host>.json`` in the stage directory,
are kept with the results, and their digest per host goes into the run
report as ``node_facts`` (also where ``clusterbench references update``
can take the hardware of a reference's provenance from).
"""

import glob
import json
import os
import shlex
import sys

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, variable

from clusterbench.machine import hwinfo

HWINFO_DIR = 'hwinfo'


def collect_command(directory, python=sys.executable, launcher=''):
    """The job-script line that writes <directory>/<host>.json on each node."""
    cmd = (
        f'{shlex.quote(python)} -m clusterbench.cli.hwinfo '
        f'--output-dir {shlex.quote(directory)}'
    )
    # A profiler preloaded for the benchmark must not load into the collector.
    return f'env -u LD_PRELOAD {launcher + " " if launcher else ""}{cmd}'


def read_node_facts(directory):
    """{host: digest} of every hwinfo file in *directory*; bad files say so."""
    out = {}
    for path in sorted(glob.glob(os.path.join(directory, '*.json'))):
        host = os.path.basename(path)[: -len('.json')]
        try:
            with open(path) as f:
                facts = json.load(f)
            out[host] = hwinfo.summary(facts)
        except (OSError, ValueError, AttributeError, TypeError) as err:
            out[host] = {'host': host, 'error': f'{os.path.basename(path)}: {err}'}
    return out


class NodeFacts(rfm.RegressionTestPlugin):
    """Record every node's hardware and software facts with the results."""

    #: Collect the facts (on by default).
    record_node_facts = variable(bool, value=True)
    #: {host: digest of its facts}, kept in the run report.
    node_facts = variable(typ.Dict[str, object], value={})

    @run_before('run', always_last=True)
    def _collect_node_facts(self):
        if not self.record_node_facts:
            return
        launcher = ''
        per_node = self.num_tasks_per_node or 0
        if per_node and (self.num_tasks or 0) > per_node:
            # Several nodes: one collector process per task, one file per node.
            # (ReFrame copies these to the job only later, in its run stage.)
            self.job.num_tasks = self.num_tasks
            self.job.num_tasks_per_node = per_node
            # The launcher without its modifier (the conditions wrapper is for
            # the benchmark's launch only).
            launcher = ' '.join(
                self.job.launcher.command(self.job) + self.job.launcher.options
            )
        self.prerun_cmds = [
            collect_command(os.path.join(self.stagedir, HWINFO_DIR), launcher=launcher),
            *self.prerun_cmds,
        ]
        self.keep_files = [*self.keep_files, HWINFO_DIR]

    @run_before('sanity')
    def _read_node_facts(self):
        if self.record_node_facts:
            found = read_node_facts(os.path.join(self.stagedir, HWINFO_DIR))
            self.node_facts = found or {
                'absent': 'no hwinfo written (see the job stderr)'
            }

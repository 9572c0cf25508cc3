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


def collect(check):
    """Before run (last): the job script collects every node's facts first."""
    if not check.record_node_facts:
        return
    launcher = ''
    per_node = check.num_tasks_per_node or 0
    if per_node and (check.num_tasks or 0) > per_node:
        # Several nodes: one collector process per task, one file per node.
        # (ReFrame copies these to the job only later, in its run stage.)
        check.job.num_tasks = check.num_tasks
        check.job.num_tasks_per_node = per_node
        # The launcher without its modifier (the conditions wrapper is for
        # the benchmark's launch only).
        launcher = ' '.join(
            check.job.launcher.command(check.job) + check.job.launcher.options
        )
    check.prerun_cmds = [
        collect_command(os.path.join(check.stagedir, HWINFO_DIR), launcher=launcher),
        *check.prerun_cmds,
    ]
    check.keep_files = [*check.keep_files, HWINFO_DIR]


def read(check):
    """Before sanity: the facts' digest per host into ``node_facts``."""
    if check.record_node_facts:
        found = read_node_facts(os.path.join(check.stagedir, HWINFO_DIR))
        check.node_facts = found or {'absent': 'no hwinfo written (see the job stderr)'}

"""The scheduler's verdict on a job, before the output is judged."""

import os
import re

from reframe.core.exceptions import SanityError

_BAD_STATES = {
    'NODE_FAIL': 'a node of the job was lost',
    'TIMEOUT': 'the time limit was reached',
    'CANCELLED': 'the job was cancelled',
    'BOOT_FAIL': 'a node failed to boot',
    'OUT_OF_MEMORY': 'out of memory',
}

# What srun prints when a node of the job stops answering. A node lost while
# a step starts, or while it runs, can end the job FAILED, not NODE_FAIL: srun
# gives up on the node before slurmctld has noticed that it is gone.
_SRUN_LOST = (
    re.compile(r'srun: error: Task launch for StepId=\S+ failed on node (\S+?):'),
    re.compile(r'srun: error: Node failure on (\S+)'),
)
# The same, with the node's index in the step's node list.
_SRUN_LOST_INDEX = re.compile(
    r'srun: error: step_launch_notify_io_failure: .*slurmstepd on node (\d+)'
)


def lost_nodes(stderr_text, nodes=()):
    """Nodes srun names as unreachable in a job's stderr, in order, once each
    (*nodes*: the job's node list, which srun's node indices refer to)."""
    found = []
    for line in stderr_text.splitlines():
        for pattern in _SRUN_LOST:
            match = pattern.search(line)
            if match and match.group(1) not in found:
                found.append(match.group(1))
        match = _SRUN_LOST_INDEX.search(line)
        if match:
            index = int(match.group(1))
            node = nodes[index] if index < len(nodes) else f'node {index}'
            if node not in found:
                found.append(node)
    return found


def scheduler_verdict(job, stagedir):
    """A SanityError naming why the scheduler ended *job* (a lost node, a
    time limit), if it did: the reason, rather than the missing output the
    job left behind."""
    state = (getattr(job, 'state', None) or '').upper()
    nodelist = list(job.nodelist or [])
    nodes = ','.join(nodelist) or '?'
    for name, why in _BAD_STATES.items():
        if name in state.split(','):
            raise SanityError(f'job {job.jobid} ended {name} on {nodes}: {why}')
    lost = lost_nodes(_job_stderr(job, stagedir), nodelist)
    if lost:
        raise SanityError(
            f'job {job.jobid} ended {state or "?"} on {nodes}: srun lost '
            f'{",".join(lost)}: a node of the job was lost'
        )


def _job_stderr(job, stagedir):
    path = os.path.join(stagedir, job.stderr or '')
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return ''

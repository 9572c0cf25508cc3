"""The scheduler's verdict on a job, before the output is judged."""

import reframe as rfm
from reframe.core.builtins import run_before
from reframe.core.exceptions import SanityError


class JobStateCheck(rfm.RegressionTestPlugin):
    """A job the scheduler ended (a lost node, a time limit) fails with that
    reason, rather than with the missing output it left behind."""

    @run_before('sanity')
    def _scheduler_verdict(self):
        state = (getattr(self.job, 'state', None) or '').upper()
        bad = {
            'NODE_FAIL': 'a node of the job was lost',
            'TIMEOUT': 'the time limit was reached',
            'CANCELLED': 'the job was cancelled',
            'BOOT_FAIL': 'a node failed to boot',
            'OUT_OF_MEMORY': 'out of memory',
        }
        for name, why in bad.items():
            if name in state.split(','):
                nodes = ','.join(self.job.nodelist or []) or '?'
                raise SanityError(
                    f'job {self.job.jobid} ended {name} on {nodes}: {why}'
                )

"""The scheduler's verdict on a job, before the output is judged (what
each scheduler says: :mod:`clusterbench.site.scheduler`)."""

import os

from reframe.core.exceptions import SanityError

from clusterbench.site import scheduler


def scheduler_verdict(job, stagedir):
    """A SanityError naming why the scheduler ended *job* (a lost node, a
    time limit), if it did: the reason, rather than the missing output the
    job left behind."""
    state = (getattr(job, 'state', None) or '').upper()
    nodelist = list(job.nodelist or [])
    end = scheduler.job_end(
        job.scheduler.registered_name, state, _job_stderr(job, stagedir), nodelist
    )
    if end:
        how, why = end
        raise SanityError(
            f'job {job.jobid} ended {how} on {",".join(nodelist) or "?"}: {why}'
        )


def _job_stderr(job, stagedir):
    path = os.path.join(stagedir, job.stderr or '')
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return ''

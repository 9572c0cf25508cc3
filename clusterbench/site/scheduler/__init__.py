"""The scheduler seam: all that clusterbench knows of a batch scheduler.

A scheduler is a module here that provides the names of :data:`INTERFACE`:

- ``NAMES``: the ReFrame scheduler backends it is (``slurm``, ``squeue``);
- ``job_end(state, stderr_text, nodes)``: ``(how, why)`` the scheduler ended
  a job itself (a lost node, a time limit), or None; the judged checks fail
  such a job with that reason (``checks/plugins/jobstate.py``);
- ``partitions(env=None)``: what ``site init`` reads of the cluster, a list
  of ``Partition`` (name, nodes and the facts they share) or a ``Todo``;
- ``mpi_plugins(env=None)`` and ``plugin_for(mpi, plugins)``: how its
  launcher starts the ranks of each MPI (``site init`` writes it).

Slurm (:mod:`.slurm`) is the one today. To add one: its module here, named
in :data:`SCHEDULERS` (ARCHITECTURE.md, "Where to add").
"""

from clusterbench.site.scheduler import slurm

#: The schedulers clusterbench reads.
SCHEDULERS = (slurm,)

#: What a scheduler module provides.
INTERFACE = ('job_end', 'partitions', 'mpi_plugins', 'plugin_for')

#: ReFrame's state of a job it ended at its time limit (the local scheduler).
_TIMEOUT = ('TIMEOUT', 'the time limit was reached')


def named(backend):
    """The scheduler module of ReFrame's scheduler *backend*, or None."""
    return next((s for s in SCHEDULERS if backend in s.NAMES), None)


def names():
    """The names ``site init --scheduler`` accepts."""
    return [s.NAMES[0] for s in SCHEDULERS]


def job_end(backend, state, stderr_text, nodes=()):
    """``(how, why)`` the scheduler *backend* ended a job in *state*, or None."""
    state = (state or '').upper()
    found = named(backend)
    if found is not None:
        return found.job_end(state, stderr_text, list(nodes))
    return _TIMEOUT if 'TIMEOUT' in state.split(',') else None

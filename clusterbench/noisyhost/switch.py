"""The noisy-host profile: whether a partition's runs are judged for a host
shared with others, and by which thresholds. The one place that reads it.

A partition turns it on in its site config::

    'extras': {'noisy_host': True}                    # the thresholds' defaults
    'extras': {'noisy_host': {'max_other_cpu': 0.2}}  # some of them changed

With it on (the embedded ``local`` system: a VM that shares its host), every
run is judged against the thresholds of :data:`conditions.DEFAULTS`: a run
that breaks one is DISTURBED; the host probe runs before and after each
launch; figures outside their references are confirmed by more runs; and
``clusterbench run --wait-quiet`` waits for a quiet machine.

Off (the default, and what a cluster of dedicated batch nodes wants: there a
slower node *is* the regression), none of that work is done: no host probe,
nothing DISTURBED, no confirmation runs, no waiting. The cheap conditions
(steal, other processes' and the ranks' CPU share, the load before, the
clock: two reads of ``/proc/stat`` around the launch) are still measured and
kept in the run report as facts. They cost nothing a benchmark can feel, and
they are what tells a reader afterwards that a slow run shared its node (a
mis-placed job, a daemon) -- judging them is what the profile decides, not
seeing them.

``extras.conditions`` (the thresholds' older place) is still read, under
``noisy_host``; it does not turn the profile on.
"""

from clusterbench.core.errors import ClusterbenchError
from clusterbench.noisyhost import conditions
from clusterbench.site import contract

KEY = 'noisy_host'


def off(where):
    """What confirmation and --wait-quiet say where the profile is off."""
    return f"the noisy-host profile is off for {where} (extras: {{'{KEY}': True}})"


def thresholds(extras, local=True):
    """The partition's thresholds if it has the profile on, else None.

    *local*: the job runs on the host that measures it (``local`` scheduler);
    see :func:`conditions.thresholds` for what it changes.
    """
    extras = extras or {}
    given = extras.get(KEY, False)
    if given is False or given is None:
        return None
    if given is True:
        given = {}
    if not isinstance(given, dict):
        raise ClusterbenchError(
            f'extras.{KEY}: {given!r}: True, False or a dict of thresholds '
            f'({", ".join(conditions.DEFAULTS)})'
        )
    unknown = sorted(set(given) - set(conditions.DEFAULTS))
    if unknown:
        raise ClusterbenchError(
            f'extras.{KEY}: unknown threshold {unknown[0]!r} '
            f'(known: {", ".join(conditions.DEFAULTS)})'
        )
    legacy = extras.get('conditions') or {}
    return conditions.thresholds({'conditions': {**legacy, **given}}, local)


def enabled(partition):
    """Whether *partition* (a site config's partition entry) has the profile."""
    spec = contract.PartitionSpec.of(partition)
    return thresholds(spec.extras, spec.runs_here) is not None

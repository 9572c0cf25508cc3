"""The run's conditions around every benchmark launch, and DISTURBED runs.

The launcher line of the job script runs through ``python -m
clusterbench.cli.conditions wrap`` (ReFrame's launcher ``modifier``), on the node
that runs the script: steal, other processes' CPU time, the ranks' CPU share
(where the ranks are the launcher's descendants: the ``local`` scheduler),
the load average before, the clock, and the host probe measured just before
the launch (:mod:`clusterbench.noisyhost.hostprobe`). They go into the run
report as ``run_conditions``, with the node's identity as
``machine_identity``.

Where the partition has the noisy-host profile on
(``extras.noisy_host``, :mod:`clusterbench.noisyhost.switch`), a run that
breaks its thresholds (``clusterbench.noisyhost.conditions.DEFAULTS``) is
*disturbed*: ``disturbed`` names
what it broke (a host probe worse than in the sessions of the test's
references by more than ``max_host_drift`` counts: the host changed), its
figures are recorded but not judged (the check drops their references, so
plain ReFrame does not judge them either), and ``clusterbench`` shows
``DISTURBED (...)`` instead of a verdict and never takes its figures into a
reference. A figure beyond its band by more than the disturbance explains
(:func:`clusterbench.judging.disturbed.beyond`: twice the loss measured)
keeps its reference and is judged all the same. With the profile off the
host probe does not run, nothing is judged, and the cheap conditions are
kept as facts (noisyhost says why).
"""

import os
import shlex
import sys

from reframe.core.logging import getlogger

from clusterbench.core import disturbance, figures
from clusterbench.judging import verdict, vocabulary
from clusterbench.noisyhost import conditions, hostprobe, quiet, switch
from clusterbench.site import contract

CONDITIONS_FILE = 'conditions.json'


def resources_of(declared):
    """What a test's figures depend on, from their declarations (the host
    probe measures these at the test's parallelism): a memory-bound figure
    the memory bandwidth, another flop rate the cores' arithmetic, a latency
    or another bandwidth the link between two ranks. Times, counts and
    shares depend on whatever the rest does."""
    found = set()
    for figure in declared:
        if vocabulary.is_memory_bound(figure.name, figure.unit):
            found.add(hostprobe.MEMORY)
        elif figure.unit in figures.FLOP_RATE_UNITS:
            found.add(hostprobe.COMPUTE)
        elif vocabulary.is_link_unit(figure.unit):
            found.add(hostprobe.LINK)
    return tuple(r for r in hostprobe.RESOURCES if r in found)


def wrapper_options(
    output,
    ranks,
    local,
    python=sys.executable,
    probe=True,
    cpus_per_rank=1,
    resources=hostprobe.RESOURCES,
):
    """The launcher modifier's options (the modifier itself is ``env``)."""
    return [
        # The job's LD_PRELOAD (a profiler) is for the ranks, not for Python.
        '-u',
        'LD_PRELOAD',
        '_CB_LD_PRELOAD="${LD_PRELOAD:-}"',
        shlex.quote(python),
        '-m',
        'clusterbench.cli.conditions',
        'wrap',
        '-o',
        shlex.quote(output),
        '--ranks',
        str(ranks),
        '--cpus-per-rank',
        str(cpus_per_rank),
        *(['--local'] if local else []),
        *([] if probe else ['--no-probe']),
        '--probe-resources',
        ','.join(resources) or 'none',
        '--',
    ]


def runs_here(check):
    return contract.runs_here(check.current_partition)


def noisy_host(check):
    """The partition's thresholds if it has the noisy-host profile, or None."""
    return switch.thresholds(check.current_partition.extras, runs_here(check))


def wait_until_quiet(check):
    if check.wait_quiet > 0 and runs_here(check) and noisy_host(check):
        getlogger().info(
            f'{check.display_name}: waiting up to {check.wait_quiet:g} s for a '
            'quiet machine'
        )
        quiet.wait_quiet(check.wait_quiet, say=getlogger().warning)


def wrap_launcher(check):
    """Run the launcher line through the conditions wrapper (last before the
    run: the launcher's own modifier, if any, runs inside it)."""
    if not check.measure_conditions:
        return
    local = runs_here(check)
    ranks = (check.num_tasks if local else check.num_tasks_per_node) or 1
    launcher = check.job.launcher
    inner = [launcher.modifier, *launcher.modifier_options]
    launcher.modifier = 'env'
    launcher.modifier_options = [
        *wrapper_options(
            os.path.join(check.stagedir, CONDITIONS_FILE),
            ranks,
            local,
            probe=check.probe_host and noisy_host(check) is not None,
            # A rank's threads (STREAM: one rank, a thread per core).
            cpus_per_rank=check.num_cpus_per_task or 1,
            resources=check.probe_resources(),
        ),
        *(inner if inner[0] else []),
    ]
    check.keep_files = [*check.keep_files, CONDITIONS_FILE]


def read_conditions(check):
    """What the wrapper measured, judged where the profile is on."""
    if not check.measure_conditions:
        return
    found = conditions.load(os.path.join(check.stagedir, CONDITIONS_FILE))
    check.machine_identity = found.pop('identity', {}) or {}
    limits = noisy_host(check)
    if not found:
        found = {'absent': {'all': 'the launcher wrote no conditions.json'}}
    # None: the profile is off, the conditions are facts, not judged.
    found['thresholds'] = limits
    if check.judge_conditions:
        check.disturbed = conditions.judge_run(
            found, limits, check.reference_host_probe
        )
    found['disturbed'] = check.disturbed
    # The data its words come from: what readers of the report judge by.
    found['disturbance'] = disturbance.records(check.disturbed)
    check.run_conditions = found


def test_case_verdict(check):
    """*check*'s figures judged as ``clusterbench`` judges one sample
    (a :class:`~clusterbench.judging.verdict.Verdict`), or None before any."""
    return verdict.of_test_case(check.perfvalues, check.disturbed)


def do_not_judge_a_disturbed_run(check):
    """Drop the references of a disturbed run's figures, except those beyond
    what the disturbance explains (last before the performance stage)."""
    if not check.disturbed:
        return
    kept = _beyond_the_disturbance(check)
    judged = f', except {", ".join(kept)}: beyond what it explains' if kept else ''
    getlogger().warning(
        f'{check.display_name}: DISTURBED ({check.disturbed}): its figures '
        f'are recorded but not judged{judged}'
    )
    check.reference = {check.current_partition.fullname: kept} if kept else {}


def _beyond_the_disturbance(check):
    """{figure: its reference} of the figures beyond their band by more than
    the disturbance explains (judging.disturbed.beyond): their references
    stay, so that ReFrame and clusterbench judge them."""
    # ReFrame's own lookup of the partition's references ($index too).
    reference = check._resolve_reference()
    where = check.current_partition.fullname
    kept = {}
    for name, expr in check.perf_variables.items():
        try:
            ref = tuple(reference[f'{where}:{name}'])
            value = expr.evaluate()
        except (KeyError, TypeError):
            continue  # no reference, or an expected failure's
        found = verdict.of_test_case(
            {name: [value, *ref[:3], expr.unit, None]}, check.disturbed
        )
        if found is not None and found.kind.fails_run:
            kept[name] = ref
    return kept

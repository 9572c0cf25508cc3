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

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import loggable, run_before, variable
from reframe.core.logging import getlogger

from clusterbench.core import disturbance, figures
from clusterbench.judging import verdict, vocabulary
from clusterbench.noisyhost import conditions, hostprobe, quiet, sessionvars, switch
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


class RunConditions(rfm.RegressionTestPlugin):
    """Measure the run's conditions; name a disturbed run instead of judging it."""

    #: Measure around the launch (on by default).
    measure_conditions = variable(typ.Bool, value=True)
    #: Run the host probe before the launch (clusterbench.noisyhost.hostprobe),
    #: where the partition has the noisy-host profile on.
    #: (`clusterbench run` gives a session's -S through the environment.)
    probe_host = variable(typ.Bool, value=sessionvars.default('probe_host'))
    #: Judge them against the thresholds where the partition has the
    #: noisy-host profile on (off: measured and kept, never
    #: DISTURBED; the project's tests of other things use this on a shared
    #: machine).
    judge_conditions = variable(typ.Bool, value=sessionvars.default('judge_conditions'))
    #: Before the run on a ``local`` partition, wait up to this many seconds
    #: for the machine to be quiet (0: do not wait). ``clusterbench run
    #: --wait-quiet[=SECONDS]`` sets it.
    wait_quiet = variable(float, value=sessionvars.default('wait_quiet'))
    #: What was measured (kept in the run report).
    run_conditions = variable(typ.Dict[str, object], value={})
    #: The identity of the node that ran the launcher (kept in the report).
    machine_identity = variable(typ.Dict[str, object], value={})
    #: '' or what the run broke (a core.disturbance.Disturbed: its words,
    #: "steal 18 %, ranks' CPU share 71 %", and the data they come from).
    disturbed = variable(str, value='')

    def _runs_here(self):
        return contract.runs_here(self.current_partition)

    def _noisy_host(self):
        """The partition's thresholds if it has the noisy-host profile, or None."""
        return switch.thresholds(self.current_partition.extras, self._runs_here())

    @run_before('run')
    def _wait_until_quiet(self):
        if self.wait_quiet > 0 and self._runs_here() and self._noisy_host():
            getlogger().info(
                f'{self.display_name}: waiting up to {self.wait_quiet:g} s for a '
                'quiet machine'
            )
            quiet.wait_quiet(self.wait_quiet, say=getlogger().warning)

    @run_before('run', always_last=True)
    def _wrap_launcher(self):
        if not self.measure_conditions:
            return
        local = self._runs_here()
        ranks = (self.num_tasks if local else self.num_tasks_per_node) or 1
        launcher = self.job.launcher
        inner = [launcher.modifier, *launcher.modifier_options]
        launcher.modifier = 'env'
        launcher.modifier_options = [
            *wrapper_options(
                os.path.join(self.stagedir, CONDITIONS_FILE),
                ranks,
                local,
                probe=self.probe_host and self._noisy_host() is not None,
                # A rank's threads (STREAM: one rank, a thread per core).
                cpus_per_rank=self.num_cpus_per_task or 1,
                resources=self.probe_resources(),
            ),
            *(inner if inner[0] else []),
        ]
        self.keep_files = [*self.keep_files, CONDITIONS_FILE]

    @run_before('sanity')
    def _read_conditions(self):
        if not self.measure_conditions:
            return
        found = conditions.load(os.path.join(self.stagedir, CONDITIONS_FILE))
        self.machine_identity = found.pop('identity', {}) or {}
        limits = self._noisy_host()
        if not found:
            found = {'absent': {'all': 'the launcher wrote no conditions.json'}}
        # None: the profile is off, the conditions are facts, not judged.
        found['thresholds'] = limits
        if self.judge_conditions:
            self.disturbed = conditions.judge_run(
                found, limits, self.reference_host_probe
            )
        found['disturbed'] = self.disturbed
        # The data its words come from: what readers of the report judge by.
        found['disturbance'] = disturbance.records(self.disturbed)
        self.run_conditions = found

    def reference_host_probe(self):
        """The host probe's figures in the sessions this test's references
        were made from, or {} (a check without references has none)."""
        return {}

    def probe_resources(self):
        """What the host probe measures at the test's parallelism
        (:func:`resources_of` its figures); all of them by default."""
        return hostprobe.RESOURCES

    @loggable
    @property
    def verdict(self):
        """The test case's verdict for ReFrame's perflog handlers (filelog,
        syslog, httpjson: ``%(check_verdict)s``): its figures judged as
        ``clusterbench`` judges one sample, ``SLOWER (gflops)``; None before
        any figure. Computed when the record is logged, so a test that
        failed its performance stage has one too."""
        found = verdict.of_test_case(self.perfvalues, self.disturbed)
        return None if found is None else str(found)

    @loggable
    @property
    def verdict_kind(self):
        """The kind of :attr:`verdict` alone (``SLOWER``), to filter on."""
        found = verdict.of_test_case(self.perfvalues, self.disturbed)
        return None if found is None else str(found.kind)

    @run_before('performance', always_last=True)
    def _do_not_judge_a_disturbed_run(self):
        if not self.disturbed:
            return
        kept = self._beyond_the_disturbance()
        judged = f', except {", ".join(kept)}: beyond what it explains' if kept else ''
        getlogger().warning(
            f'{self.display_name}: DISTURBED ({self.disturbed}): its figures '
            f'are recorded but not judged{judged}'
        )
        self.reference = {self.current_partition.fullname: kept} if kept else {}

    def _beyond_the_disturbance(self):
        """{figure: its reference} of the figures beyond their band by more
        than the disturbance explains (judging.disturbed.beyond): their
        references stay, so that ReFrame and clusterbench judge them."""
        # ReFrame's own lookup of the partition's references ($index too).
        reference = self._resolve_reference()
        where = self.current_partition.fullname
        kept = {}
        for name, expr in self.perf_variables.items():
            try:
                ref = tuple(reference[f'{where}:{name}'])
                value = expr.evaluate()
            except (KeyError, TypeError):
                continue  # no reference, or an expected failure's
            found = verdict.of_test_case(
                {name: [value, *ref[:3], expr.unit, None]}, self.disturbed
            )
            if found is not None and found.kind.fails_run:
                kept[name] = ref
        return kept

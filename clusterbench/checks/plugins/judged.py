"""The one base every benchmark check is judged through, read in one place.

:class:`JudgedCheck` declares everything a judged check has, and its hooks
call the modules that do the work:

- :mod:`~clusterbench.checks.plugins.verifiedoutput`: the exit code, the
  output file, the parser's verified result and the figures (the sanity
  function ``verified``; a figure is only recorded when it is verified);
- :mod:`~clusterbench.checks.plugins.references`: the references from
  ``reference_data/<system>/`` and the processor facts they are indexed by;
- :mod:`~clusterbench.checks.plugins.runconditions`: the run's conditions
  measured around the launch and, under the noisy-host profile, judged (a
  DISTURBED run is not judged against its references);
- :mod:`~clusterbench.checks.plugins.ceilings`: the node peak, link peak and
  portable bands the partition declares (the portable judge reads them);
- the site contract and the scheduler's verdict on the job.

A check lists it last of its project bases::

    class CGSolverBase(Observed, JudgedCheck, rfm.RunOnlyRegressionTest):

The order ReFrame runs the hooks in is the table "Hooks of a judged check"
in ARCHITECTURE.md (tests/architecture/test_check_depth.py keeps the two the same).
"""

import os

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import (
    loggable,
    run_after,
    run_before,
    sanity_function,
    variable,
)
from reframe.core.exceptions import ReframeError
from reframe.core.runtime import runtime

from clusterbench.checks.plugins import (
    ceilings,
    jobstate,
    references,
    runconditions,
    skipreason,
    storedhistory,
    verifiedoutput,
)
from clusterbench.core.errors import ClusterbenchError
from clusterbench.noisyhost import hostprobe, sessionvars
from clusterbench.site import contract

#: The site contract's verdict on the system ReFrame selected: checked once
#: per session, refused by every check (one would leave the others to run).
_CONTRACT = {}


def site_contract_problem():
    """The one line of the selected system's first bad ``extras``, or ''."""
    system = runtime().system
    if id(system) not in _CONTRACT:
        source = runtime().site_config.sources[-1]
        try:
            for part in system.partitions:
                contract.PartitionSpec.of(part, source)
                for environ in part.environs:
                    contract.check_environment(environ.name, environ.extras, source)
            _CONTRACT[id(system)] = ''
        except ClusterbenchError as err:
            _CONTRACT[id(system)] = str(err)
    return _CONTRACT[id(system)]


class JudgedCheck(rfm.RegressionTestPlugin):
    """Verified figures judged against external references, where the run's
    conditions allow it."""

    # -- the output (verifiedoutput.py's docstring says what a base declares)
    output_program = ''
    output_parser = None
    output_file = ''
    exit_reasons = {}

    # -- the references (references.py)
    #: The YAML file, relative to the system's reference directory.
    reference_file = variable(str)
    reference_index = variable(typ.List[str], value=list(references.BASE_INDEX))
    #: The partition's processor facts (filled in at setup; kept in reports).
    processor_facts = variable(typ.Dict[str, object], value={})
    #: The programming environment's extras (MPI, compiler, BLAS), for reports.
    environ_extras = variable(typ.Dict[str, object], value={})
    #: The reference file read ('' if none): its provenance holds the host
    #: probe of the sessions each entry was made from.
    reference_path = variable(str, value='', loggable=False)
    #: Why the reference file cannot be used ('' if it can); fails the test.
    reference_error = variable(str, value='', loggable=False)
    #: vendor-family-model of the partition's nodes (``AMD-25-17``): the
    #: partition's ``extras.cpu_kind``, computed by the site config when it
    #: loads (``common.cpu_kind()``); a local partition without one is this
    #: host. ReFrame resolves it by name in ``$index``, like ``reflookup``.
    cpu_kind = variable(str, value=references.UNKNOWN_KIND)

    # -- the run's conditions (runconditions.py)
    #: Measure around the launch (on by default).
    measure_conditions = variable(typ.Bool, value=True)
    #: Run the host probe before the launch (clusterbench.noisyhost.hostprobe),
    #: where the partition has the noisy-host profile on.
    #: (`clusterbench run` gives a session's -S through the environment.)
    probe_host = variable(typ.Bool, value=sessionvars.default('probe_host'))
    #: Judge them against the thresholds where the partition has the
    #: noisy-host profile on (off: measured and kept, never DISTURBED; the
    #: project's tests of other things use this on a shared machine).
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

    # -- the declared ceilings (ceilings.py)
    peak_gflops_per_node = variable(float, value=0.0)
    portable_bands = variable(typ.Dict[str, typ.List[float]], value={})
    #: The partition's declared link peak (MB/s per direction), if any.
    link_peak = variable(typ.Dict[str, object], value={})
    #: Why there is no link efficiency figure, when there is none.
    efficiency_note = variable(str, value='')

    # A skip keeps its reason in the run report (plugins/skipreason.py).
    skip_reason = skipreason.skip_reason
    skip = skipreason.skip

    # -- what a benchmark base may override
    def output_path(self):
        """The output file's path (a :class:`SanityError` if it cannot be named)."""
        return os.path.join(self.stagedir, self.output_file or self.job.stdout)

    def output_expected(self):
        """Keywords of the parser's ``verify``: what the run was asked to do."""
        return {}

    def parse_output(self, text, source):
        """The parser's verified result of *text* (a ClusterbenchError if not)."""
        return self.output_parser.verify(text, source, **self.output_expected())

    def output_figures(self, result):
        """``{name: (value, unit)}`` of a verified result: the parser's figures."""
        return self.output_parser.figures(result, os.path.basename(self.output_path()))

    def further_sanity(self):
        """More deferred assertions of a verified run (none by default)."""
        return []

    def probe_resources(self):
        """What the host probe measures at the test's parallelism: what the
        figures the parser declares depend on; all resources otherwise."""
        declared = getattr(self.output_parser, 'DECLARED', None)
        if declared:
            return runconditions.resources_of(declared)
        return hostprobe.RESOURCES

    def read_link_peak(
        self, crosses_link, not_crossing='intra-node run: the link is not used'
    ):
        """Take the declared link peak at setup (ceilings.read_link_peak)."""
        ceilings.read_link_peak(self, crosses_link, not_crossing)

    def verified_result(self):
        """The parser's verified result (deferred), or one-line SanityError."""
        return verifiedoutput.verified_result(self)

    def reference_host_probe(self):
        """The host probe's figures in the sessions this test's references
        were made from, or {}: the run conditions judge drift against it."""
        return references.host_probe_of_references(self)

    # -- the hooks, in the order of ARCHITECTURE.md's table
    @run_after('init')
    def _use_external_references(self):
        references.use_external_references(self)

    @run_after('init')
    def _keep_the_site_contract(self):
        # Plain `reframe` too: a typo'd extras key is one line, not a default.
        found = site_contract_problem()
        if found:
            raise ReframeError(found)

    @run_before('setup')
    def _fail_on_a_broken_reference_file(self):
        references.refuse_a_broken_reference_file(self)

    @run_before('setup')
    def _history_can_be_stored(self):
        found = storedhistory.problem()
        if found:
            raise ReframeError(found)

    @run_after('setup')
    def _record_processor_facts(self):
        references.record_processor_facts(self)

    @run_after('setup')
    def _exclusive_nodes(self):
        # A figure measured beside another job on its node is not the node's:
        # on a cluster, whole nodes unless the partition's extras say
        # 'exclusive': False (docs/systems.md, "Exclusive nodes").
        part = self.current_partition
        spec = contract.PartitionSpec.of(part)
        if not spec.runs_here and spec.exclusive:
            self.exclusive_access = True

    @run_after('setup')
    def _record_declared_ceilings(self):
        ceilings.record_declared_ceilings(self)

    @run_before('run')
    def _wait_until_quiet(self):
        runconditions.wait_until_quiet(self)

    @run_before('run', always_last=True)
    def _wrap_launcher(self):
        runconditions.wrap_launcher(self)

    @run_before('sanity')
    def _read_conditions(self):
        runconditions.read_conditions(self)

    @run_before('sanity')
    def _scheduler_verdict(self):
        # A job the scheduler ended (a lost node, a time limit) fails with
        # that reason, rather than with the missing output it left behind.
        jobstate.scheduler_verdict(self.job, self.stagedir)

    @sanity_function
    def verified(self):
        return verifiedoutput.verified(self)

    @run_before('performance')
    def _record_verified_figures(self):
        verifiedoutput.record_figures(self)

    @run_before('performance', always_last=True)
    def _do_not_judge_a_disturbed_run(self):
        runconditions.do_not_judge_a_disturbed_run(self)

    @loggable
    @property
    def verdict(self):
        """The test case's verdict for ReFrame's perflog handlers (filelog,
        syslog, httpjson: ``%(check_verdict)s``): its figures judged as
        ``clusterbench`` judges one sample, ``SLOWER (gflops)``; None before
        any figure. Computed when the record is logged, so a test that
        failed its performance stage has one too."""
        found = runconditions.test_case_verdict(self)
        return None if found is None else str(found)

    @loggable
    @property
    def verdict_kind(self):
        """The kind of :attr:`verdict` alone (``SLOWER``), to filter on."""
        found = runconditions.test_case_verdict(self)
        return None if found is None else str(found.kind)

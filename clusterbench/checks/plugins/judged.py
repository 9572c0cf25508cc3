"""The base every benchmark check is judged through: three orthogonal
plugins and the scheduler's verdict.

- :class:`~clusterbench.checks.plugins.verifiedoutput.VerifiedOutput`: the
  exit code, the output file, the parser's verified result and the figures;
- :class:`~clusterbench.checks.plugins.references.ExternalReferences`: the
  references from ``reference_data/<system>/`` and the processor facts they
  are indexed by;
- :class:`~clusterbench.checks.plugins.runconditions.RunConditions`: the run's
  conditions measured around the launch and, under the noisy-host profile,
  judged (a DISTURBED run is not judged against its references).

The plugins do not know each other. The one thing they share is wired here:
the run conditions judge the host probe against the sessions the references
were made from. A check lists this first of its judging bases::

    class CGSolverBase(Instrumented, JudgedCheck, rfm.RunOnlyRegressionTest):

The order ReFrame runs the hooks in is the table "Hooks of a judged check"
in ARCHITECTURE.md (tests/test_check_depth.py keeps the two the same).
"""

from reframe.core.builtins import run_after, run_before
from reframe.core.exceptions import ReframeError
from reframe.core.runtime import runtime

from clusterbench.checks.plugins import jobstate, skipreason
from clusterbench.checks.plugins.references import ExternalReferences
from clusterbench.checks.plugins.runconditions import RunConditions, resources_of
from clusterbench.checks.plugins.verifiedoutput import VerifiedOutput
from clusterbench.core.errors import ClusterbenchError
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


class JudgedCheck(VerifiedOutput, ExternalReferences, RunConditions):
    """Verified figures judged against external references, where the run's
    conditions allow it."""

    # A skip keeps its reason in the run report (plugins/skipreason.py).
    skip_reason = skipreason.skip_reason
    skip = skipreason.skip

    def reference_host_probe(self):
        return self.host_probe_of_references()

    def probe_resources(self):
        # The figures the parser declares: what the probe measures.
        declared = getattr(self.output_parser, 'DECLARED', None)
        return resources_of(declared) if declared else super().probe_resources()

    @run_after('init')
    def _keep_the_site_contract(self):
        # Plain `reframe` too: a typo'd extras key is one line, not a default.
        found = site_contract_problem()
        if found:
            raise ReframeError(found)

    @run_after('setup')
    def _exclusive_nodes(self):
        # A figure measured beside another job on its node is not the node's:
        # on a cluster, whole nodes unless the partition's extras say
        # 'exclusive': False (docs/systems.md, "Exclusive nodes").
        part = self.current_partition
        spec = contract.PartitionSpec.of(part)
        if not spec.runs_here and spec.exclusive:
            self.exclusive_access = True

    @run_before('sanity')
    def _scheduler_verdict(self):
        # A job the scheduler ended (a lost node, a time limit) fails with
        # that reason, rather than with the missing output it left behind.
        jobstate.scheduler_verdict(self.job, self.stagedir)

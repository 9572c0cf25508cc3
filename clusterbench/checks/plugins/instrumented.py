"""The run-time plugins in one base: MPI profiling (on request), node facts,
energy and the partition's declared ceilings (node, link, bands; always). A
library check lists it first among its bases::

    class CGSolverBase(Instrumented, ExternalReferences, rfm.RunOnlyRegressionTest):
"""

from clusterbench.checks.plugins.ceilings import DeclaredCeilings
from clusterbench.checks.plugins.energy import EnergyMeasurement
from clusterbench.checks.plugins.nodefacts import NodeFacts
from clusterbench.checks.plugins.profiling import MPIProfiling


class Instrumented(MPIProfiling, NodeFacts, EnergyMeasurement, DeclaredCeilings):
    """``-S mpi_profile=1`` profiles; node facts, energy and the declared
    ceilings of the portable figures come with every run."""

"""The run-time plugins in one base: MPI profiling (on request), node facts,
energy and the partition's declared ceilings (always). A library check
lists it first among its bases::

    class CGSolverBase(Instrumented, ExternalReferences, rfm.RunOnlyRegressionTest):
"""

from clusterbench.checks.plugins.energy import EnergyMeasurement
from clusterbench.checks.plugins.nodefacts import NodeFacts
from clusterbench.checks.plugins.portable import PortableCeilings
from clusterbench.checks.plugins.profiling import MPIProfiling


class Instrumented(MPIProfiling, NodeFacts, EnergyMeasurement, PortableCeilings):
    """``-S mpi_profile=1`` profiles; node facts, energy and the declared
    ceilings of the portable figures come with every run."""

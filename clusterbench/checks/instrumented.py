"""The three run-time plugins in one base: MPI profiling (on request), node
facts and energy (always). A library check lists it first among its bases::

    class CGSolverBase(Instrumented, ExternalReferences, rfm.RunOnlyRegressionTest):
"""

from clusterbench.checks.energy import EnergyMeasurement
from clusterbench.checks.profiling import MPIProfiling
from clusterbench.checks.provenance import HardwareProvenance


class Instrumented(MPIProfiling, HardwareProvenance, EnergyMeasurement):
    """``-S mpi_profile=1`` profiles; node facts and energy come with every run."""

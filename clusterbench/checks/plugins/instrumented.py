"""The three run-time plugins in one base: MPI profiling (on request), node
facts and energy (always). A library check lists it first among its bases::

    class CGSolverBase(Instrumented, ExternalReferences, rfm.RunOnlyRegressionTest):
"""

from clusterbench.checks.plugins.energy import EnergyMeasurement
from clusterbench.checks.plugins.profiling import MPIProfiling
from clusterbench.checks.plugins.provenance import HardwareProvenance


class Instrumented(MPIProfiling, HardwareProvenance, EnergyMeasurement):
    """``-S mpi_profile=1`` profiles; node facts and energy come with every run."""

"""One statistics module and one table of stack names, used by every reader."""

import pytest

from clusterbench.acceptance import nodes as acceptance_nodes
from clusterbench.checks import comm
from clusterbench.judging import stats, verdict, vocabulary
from clusterbench.references import update as refupdate
from clusterbench.references import validate as refdata
from clusterbench.report import assemble
from clusterbench.site import spackenv, stacknames


def test_mad_is_scaled_once_and_the_band_has_a_floor():
    values = [10.0, 10.2, 9.8, 10.1, 9.9]
    assert stats.mad(values) == pytest.approx(0.1)
    assert stats.relative_spread(values) == pytest.approx(1.4826 * 0.1 / 10)
    assert stats.tolerance_band(values, 0.0, k=3) == pytest.approx(3 * 0.014826)
    assert stats.tolerance_band(values, 0.05) == 0.05
    assert stats.relative_spread([0.0, 1.0, -1.0]) == 0.0
    with pytest.raises(ValueError, match='median of nothing'):
        stats.median([])


def test_reference_updates_use_the_statistics_of_judging():
    values = [100.0, 90.0, 101.0, 99.0, 100.5, 60.0]
    median, tolerance, spread = refupdate.tolerance_of(values, floor=0.01, k=3.0)
    assert median == stats.median(values)
    assert spread == stats.relative_spread(values)
    assert tolerance == round(stats.tolerance_band(values, 0.01, 3.0), 2)


def test_the_report_flags_pairs_as_acceptance_flags_nodes():
    # One outlier judge: the report's pair matrices and `acceptance nodes`
    # condemn the same values (robust z against the others, bad side only).
    values = [100.0, 90.0, 101.0, 99.0, 100.5, 60.0, 140.0]
    by_host = {f'n{i}': v for i, v in enumerate(values)}
    flags, centre = assemble._robust_flags(by_host, 'higher')
    assert centre == stats.median(values)
    nodes = {
        host: acceptance_nodes.Node(
            host, {'T:x': acceptance_nodes.Figure('T', 'x', 'GFlop/s', [value])}
        )
        for host, value in by_host.items()
    }
    ranked = acceptance_nodes.rank(nodes)
    condemned = {n.name for n in ranked if n.verdict == verdict.FLAGGED}
    assert set(flags) == condemned == {'n5'}
    # No better direction: either side is an outlier.
    flags, _ = assemble._robust_flags(by_host, None)
    assert set(flags) == {'n5', 'n6'}


def test_every_unit_list_is_the_vocabulary():
    assert refdata.KNOWN_UNITS is vocabulary.UNITS
    assert vocabulary.TIME_UNITS <= vocabulary.UNITS
    assert vocabulary.BANDWIDTH_UNITS <= vocabulary.UNITS
    assert assemble._is_link_figure('bandwidth', 'GB/s')
    assert assemble._is_link_figure('latency', 'us')
    assert not assemble._is_link_figure('wall_time', 's')


def test_one_table_of_mpi_names_serves_checks_spack_and_report():
    assert spackenv.MPI_PROVIDERS == stacknames.SPACK_MPI_PROVIDERS
    for mpi in stacknames.BUILT_MPIS:
        assert mpi in stacknames.MPI_NAMES
        assert mpi in stacknames.SPACK_MPI_PROVIDERS
        assert stacknames.mpi_launcher(mpi) in ('openmpi', 'hydra')
    # Every name the report recognises starts with a known launcher, or says none.
    assert comm.pinning_options('mpirun', 'mvapich2', 1)[0][:2] == ['-ppn', '1']
    assert comm.pinning_options('mpirun', 'ompi', 1)[0][0] == '--map-by'
    assert comm.pinning_options('mpirun', 'hpcx', 1)[2].startswith('mpirun of MPI')
    assert assemble._stack_from_name('gnu-mvapich2-openblas') == (
        'mvapich2',
        'gcc',
        'openblas',
    )
    assert assemble._stack_from_name('intel_impi') == ('impi', 'intel', None)

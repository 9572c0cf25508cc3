"""One declaration per figure: every figure a real run records is declared,
in the unit it is recorded in, and the vocabulary of verdicts answers from
those declarations."""

import glob
import json
import os

import pytest
import yaml
from conftest import PROJECT, read

from clusterbench.bench import curves
from clusterbench.checks import imb as imb_check
from clusterbench.checks import osu as osu_check
from clusterbench.checks.fabric import FIGURES as FABRIC
from clusterbench.core import figures
from clusterbench.judging import vocabulary
from clusterbench.parsers import hpcc, hpcg, imb, netpipe, npb, osu, stream
from clusterbench.parsers.catalog import CATALOG

SESSION = os.path.join(PROJECT, '..', 'shared', 'fixtures', 'sessions', 'AMD-25-1')


def _leaves(tree):
    for key, value in tree.items():
        if isinstance(value, list) and len(value) == 4:
            yield key, value[3]
        elif isinstance(value, dict):
            yield from _leaves(value)


def _fixture_figures(fixtures):
    """(name, unit) of every figure the parsers read from the real outputs."""
    found = {}

    def add(figs):
        found.update({name: unit for name, (_, unit) in figs.items()})

    for path in glob.glob(os.path.join(fixtures, 'hpcc', 'hpccoutf.*.txt')):
        add(hpcc.figures(hpcc.parse_summary(read(path)), path))
    for path in glob.glob(os.path.join(fixtures, 'stream', '*.out')):
        add(stream.figures(stream.verify(read(path))))
    for path in glob.glob(os.path.join(fixtures, 'npb', '*.out')):
        add(npb.figures(npb.parse(read(path), path)))
    for path in glob.glob(os.path.join(fixtures, 'hpcg', '*.txt')):
        add(hpcg.figures(hpcg.verify(read(path), path)))
    for path in glob.glob(os.path.join(fixtures, 'osu', '*.out')):
        curve = osu.parse(read(path), path)
        add(osu_check.figures_of(curve.name, curve))
    for path in glob.glob(os.path.join(fixtures, 'imb', '*.out')):
        tables = imb.parse(read(path), path)
        add(imb_check.figures_of({name: c for (name, _), c in tables.items()}))
    for path in glob.glob(os.path.join(fixtures, 'netpipe', '*.out')):
        curve = netpipe.parse(read(path), path)
        add(curves.latency_figures(curve, 'latency'))
        add(curves.bandwidth_figures(curve, 'bandwidth'))
    return found


def test_every_figure_of_the_real_outputs_is_declared_in_its_unit(fixtures_dir):
    found = _fixture_figures(fixtures_dir)
    assert len(found) > 60
    problems = {n: CATALOG.problem(n, u) for n, u in found.items()}
    assert {n: p for n, p in problems.items() if p} == {}


def test_every_figure_of_a_whole_session_is_declared_in_its_unit(fixtures_dir):
    with open(os.path.join(SESSION, 'report.json')) as f:
        data = json.load(f)
    found = {
        (key.rsplit(':', 1)[1], values[4])
        for run in data['runs']
        for case in run['testcases']
        for key, values in (case.get('perfvalues') or {}).items()
    }
    assert len(found) > 20
    assert {(n, u): CATALOG.problem(n, u) for n, u in found} == dict.fromkeys(found, '')


def test_every_referenced_figure_is_declared_and_has_a_direction():
    seen = set()
    for path in glob.glob(os.path.join(PROJECT, 'reference_data', '*', '*.yaml')):
        with open(path) as f:
            seen.update(_leaves(yaml.safe_load(f)))
    assert len(seen) > 20
    assert {(n, u) for n, u in seen if CATALOG.problem(n, u)} == set()
    undirected = {
        (name, unit) for name, unit in seen if not vocabulary.direction(name, unit)
    }
    assert undirected == {('iterations', 'iterations')}


def test_an_undeclared_unit_or_figure_is_refused():
    with pytest.raises(figures.DeclarationError, match="unit 'furlongs/s'"):
        figures.Figure('speed', 'furlongs/s', figures.HIGHER)
    with pytest.raises(figures.DeclarationError, match='a share is in %'):
        figures.Figure('mpi_share', 's', figures.LOWER, share=True)
    assert CATALOG.problem('hlp') == "figure 'hlp' is declared by no benchmark"
    assert CATALOG.problem('stream_triad', 'MB/s') == (
        "unit 'MB/s' of 'stream_triad': it is declared in 'GB/s'"
    )
    assert vocabulary.undeclared('bidir_n_half', 'B') == ''


def test_one_name_one_direction():
    with pytest.raises(figures.DeclarationError, match='declared twice'):
        figures.Catalog(
            [figures.Figure('x', 's', figures.LOWER)],
            [figures.Figure('x', 'ms', figures.HIGHER)],
        )
    # The same name may be recorded in two units by two benchmarks.
    assert {f.unit for f in CATALOG.find('bandwidth')} == {'GB/s', 'MB/s'}


def test_patterns_name_families_of_curve_figures():
    assert CATALOG.declared('pingpong_latency_8B', 'us') is curves.LATENCY_AT
    assert CATALOG.declared('latency_1MiB', 'us') is curves.LATENCY_AT
    assert CATALOG.declared('bandwidth_peak', 'MB/s') is curves.BANDWIDTH_PEAK
    assert CATALOG.declared('sendrecv_n_half', 'B') is curves.N_HALF
    assert CATALOG.declared('latency_8X') is None
    # An exact declaration wins over a family.
    assert CATALOG.declared('latency', 'us').name == 'latency'


def test_declared_figures_of_the_checks():
    for figure in FABRIC:
        assert vocabulary.direction(figure.name, figure.unit), figure
    assert vocabulary.direction('mpi_share', '%') == vocabulary.LOWER
    assert vocabulary.direction('stalls_worst', '%') == vocabulary.LOWER
    assert vocabulary.direction('hpl_dgemm_efficiency', '%') == vocabulary.HIGHER
    assert vocabulary.direction('bidir_n_half', 'B') == vocabulary.LOWER
    assert vocabulary.direction('latency_8B', 'us') == vocabulary.LOWER
    assert vocabulary.direction('message_rate_1B', 'msg/s') == vocabulary.HIGHER
    assert vocabulary.direction('iterations', 'iterations') is None
    # Undeclared: the unit decides.
    assert vocabulary.direction('some_rate', 'GB/s') == vocabulary.HIGHER
    assert vocabulary.direction('some_time', 's') == vocabulary.LOWER
    assert vocabulary.is_speed('time', 's') and vocabulary.is_speed('hpl', 'GFlop/s')
    assert not vocabulary.is_speed('energy_j', 'J')
    assert not vocabulary.is_speed('mpi_share', '%')


def test_shares_near_zero_are_declared_once_and_are_percentages():
    shares = {f.name for f in CATALOG.figures if f.share}
    assert shares == {'mpi_share', 'mpi_time_share', 'stalls_worst'}
    assert vocabulary.SHARES == shares
    # Every other figure in % is an efficiency, judged relative to its value.
    others = [f for f in CATALOG.figures if f.unit == '%' and not f.share]
    assert all('efficiency' in f.name and f.of for f in others), others
    assert vocabulary.is_share('mpi_time_share', '%')
    assert vocabulary.is_share('intra_mpi_share', '%')
    assert not vocabulary.is_share('mpi_share', 's')
    assert not vocabulary.is_share('hpl_dgemm_efficiency', '%')
    assert all(vocabulary.direction(n, '%') == vocabulary.LOWER for n in shares)


def test_every_portable_figure_has_a_band_and_its_source():
    portable = CATALOG.portable()
    assert {f.name for f in portable} >= {
        'hpl_dgemm_efficiency',
        'hpl_peak_efficiency',
        'dgemm_peak_efficiency',
        'bandwidth_triad_efficiency',
        'pingpong_copy_efficiency',
    }
    for figure in portable:
        assert figure.of and len(figure.band.source) > 40, figure.name

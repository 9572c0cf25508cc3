"""The figure vocabulary: every figure with a reference knows which way is better."""

import glob
import os

import yaml
from conftest import PROJECT

from clusterbench.checks.fabric import FIGURES as FABRIC
from clusterbench.judging import vocabulary
from clusterbench.parsers import cgsolver, hpcc, npb


def _leaves(tree):
    for key, value in tree.items():
        if isinstance(value, list) and len(value) == 4:
            yield key, value[3]
        elif isinstance(value, dict):
            yield from _leaves(value)


def test_every_referenced_figure_has_a_direction_unless_it_is_a_count():
    seen = set()
    for path in glob.glob(os.path.join(PROJECT, 'reference_data', '*', '*.yaml')):
        with open(path) as f:
            seen.update(_leaves(yaml.safe_load(f)))
    assert len(seen) > 20
    undirected = {
        (name, unit) for name, unit in seen if not vocabulary.direction(name, unit)
    }
    assert undirected == {('iterations', 'iterations')}


def test_declared_figures_of_the_checks():
    figures = [(n, u) for n, u, _ in cgsolver.FIGURES.values()]
    figures += [(n, u) for n, u, _ in hpcc.FIGURES.values()]
    figures += list(npb.FIGURES.values()) + list(FABRIC.items())
    for name, unit in figures:
        # A unit outside the set makes `references check` refuse the figure's
        # references (the fabric check's Mmsg/s did).
        assert unit in vocabulary.UNITS, (name, unit)
        if name != 'iterations':
            assert vocabulary.direction(name, unit), (name, unit)
    assert vocabulary.direction('mpi_share', '%') == vocabulary.LOWER
    assert vocabulary.direction('stalls_worst', '%') == vocabulary.LOWER
    assert vocabulary.direction('hpl_dgemm_efficiency', '%') == vocabulary.HIGHER
    assert vocabulary.direction('bidir_n_half', 'B') == vocabulary.LOWER
    assert vocabulary.direction('latency_8B', 'us') == vocabulary.LOWER
    assert vocabulary.direction('message_rate_1B', 'msg/s') == vocabulary.HIGHER
    assert vocabulary.is_speed('time', 's') and vocabulary.is_speed('hpl', 'GFlop/s')
    assert not vocabulary.is_speed('energy_j', 'J')
    assert not vocabulary.is_speed('mpi_share', '%')


def test_shares_near_zero_are_declared_once_and_are_percentages():
    # Every figure of the checks in % is either a share near zero or an
    # efficiency (judged relative to its value, far from zero).
    figures = [(n, u) for n, u, _ in cgsolver.FIGURES.values()]
    figures += [(n, u) for n, u, _ in hpcc.FIGURES.values()]
    figures += list(npb.FIGURES.values()) + list(FABRIC.items())
    shares = {n for n, u in figures if vocabulary.is_share(n, u)}
    assert shares == {'mpi_share', 'stalls_worst'} & {n for n, _ in figures}
    assert {n for n, u in figures if u == '%'} - shares <= {
        'hpl_dgemm_efficiency',
        'pingpong_link_efficiency',
        'link_efficiency',
        'link_efficiency_bidir',
    } | {n for n, _ in figures if n.endswith('efficiency')}
    assert vocabulary.is_share('mpi_time_share', '%')
    assert vocabulary.is_share('intra_mpi_share', '%')
    # Not a percentage: not a share of a whole.
    assert not vocabulary.is_share('mpi_share', 's')
    assert not vocabulary.is_share('hpl_dgemm_efficiency', '%')
    # A share is judged as the figure it is: lower is better.
    assert all(vocabulary.direction(n, '%') == vocabulary.LOWER for n in shares)

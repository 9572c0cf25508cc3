"""The microarchitecture of a CPU kind and the computed peak of a node."""

import pytest

from clusterbench.machine import peak


@pytest.mark.parametrize(
    'kind, arch',
    [
        # The kinds this project's machines showed: a guest's flags made
        # archspec read zen2 for a Zen 3 and icelake for an Emerald Rapids.
        ('AMD-25-1', 'zen3'),
        ('AMD-25-17', 'zen4'),
        ('AMD-26-2', 'zen5'),
        ('Intel-6-207', 'emeraldrapids'),
        ('Intel-6-143', 'sapphirerapids'),
    ],
)
def test_known_kinds_are_named_from_family_and_model(kind, arch):
    assert peak.microarchitecture(kind, fallback='zen2') == arch


def test_unknown_kind_keeps_the_fallback():
    assert peak.microarchitecture('Hygon-24-0', fallback='zen') == 'zen'
    assert peak.microarchitecture('unknown', fallback=None) is None
    # A report's cpu_kind that is not text (a hand-edited or hostile report,
    # found by tests/cli/test_fuzz_hostile.py) is no kind, never a traceback.
    assert peak.microarchitecture({'AMD': 25}, fallback='zen2') == 'zen2'
    assert peak.computed({'AMD': 25}, 2, 2400.0, flags=('avx2', 'fma')).per_core == 38.4


def test_computed_peak_says_how():
    node = peak.computed('AMD-25-1', cores=2, mhz=2445.4)
    assert node.how == 'computed'
    assert node.per_core == pytest.approx(16 * 2.4454)
    assert node.per_node == pytest.approx(2 * 16 * 2.4454)
    assert 'zen3: 16 FLOP/cycle' in node.source and '2445 MHz' in node.source


def test_unknown_core_falls_back_to_its_vector_isa():
    node = peak.computed('Foo-1-1', cores=4, mhz=1000, flags=['avx2', 'fma', 'sse2'])
    assert node.per_core == 16.0 and 'vector ISA' in node.source
    assert peak.computed('Foo-1-1', cores=4, mhz=1000, flags=[]) is None
    assert peak.computed('AMD-25-1', cores=2, mhz=None) is None


def test_declared_peak():
    node = peak.declared(5000, cores=128)
    assert node.how == 'declared' and node.per_node == pytest.approx(5000)

"""One Reference type (value, bounds, unit) is what every model that judges
a figure against its reference holds, instead of its own loose fields."""

import dataclasses
import math
import typing

import pytest

from clusterbench.judging.trend import Point
from clusterbench.judging.verdict import Judged, bounds
from clusterbench.report.model import Cell
from clusterbench.results import runreport

LOOSE = {'reference', 'lower', 'upper', 'low', 'high'}


@pytest.mark.parametrize('model', [Judged, Point, Cell, runreport.Figure])
def test_a_model_holds_one_reference_not_loose_fields(model):
    from clusterbench.core.reference import Reference

    names = {f.name for f in dataclasses.fields(model)}
    assert not names & LOOSE, (model.__name__, names & LOOSE)
    hints = typing.get_type_hints(model)
    assert [n for n, t in hints.items() if t == typing.Optional[Reference]] == [
        'ref'
    ], model.__name__


def test_a_reference_from_reframes_tuple_gives_reframes_band():
    from clusterbench.core.reference import Reference

    ref = Reference.from_reframe((200.0, -0.1, 0.05, 'GB/s'))
    assert (ref.value, ref.lower, ref.upper, ref.unit) == (200.0, -0.1, 0.05, 'GB/s')
    assert ref.band() == pytest.approx((180.0, 210.0))
    # A negative value: ReFrame mirrors the fractions (-0.1 stays "below").
    assert Reference.from_reframe((-50.0, -0.1, 0.2, 's')).band() == pytest.approx(
        (-55.0, -40.0)
    )
    # None: unbounded on that side; a zero value: the bounds are absolute.
    assert Reference(10.0, None, 0.5).band() == (-math.inf, 15.0)
    assert Reference(0, -1.0, 2.0).band() == (-1.0, 2.0)
    # A ReFrame tuple without a unit, and the verdict's bounds are the same.
    assert Reference.from_reframe((4.0, -0.5, None)).unit == ''
    assert bounds(-50.0, -0.1, 0.2) == Reference(-50.0, -0.1, 0.2).band()

"""One figure of the executive page (:class:`Stat`: median [min-max] of n
samples, or why there is none) and how a figure picks the cell it comes
from among a partition's configurations."""

from dataclasses import dataclass
from typing import Optional

from clusterbench.core.figures import Better


@dataclass
class Stat:
    """One headline figure: median [low-high] of n samples, or why not."""

    value: Optional[float]
    unit: str = ''
    low: Optional[float] = None
    high: Optional[float] = None
    n: int = 0
    state: str = ''
    note: str = ''
    left_out: int = 0
    #: Which way the figure is better (the baseline chart reads it).
    better: Optional[Better] = None

    @classmethod
    def of(cls, cell, note=''):
        if cell is None:
            return None
        values = cell.values
        return cls(
            cell.value,
            cell.benchmark.unit,
            min(values) if values else None,
            max(values) if values else None,
            len(values),
            cell.state,
            note or cell.benchmark.title,
            len(cell.disturbed),
            cell.benchmark.better,
        )

    def scaled(self, factor, unit, note=None):
        """The same samples times *factor* (a constant: the range scales too)."""
        if self.value is None or factor is None:
            return None

        def times(v):
            return None if v is None else v * factor

        return Stat(
            times(self.value),
            unit,
            times(self.low),
            times(self.high),
            self.n,
            self.state,
            self.note if note is None else note,
            self.left_out,
            self.better,
        )

    @property
    def spread(self):
        """(max - min) / median of two or more samples."""
        if self.n < 2 or not self.value:
            return None
        return (self.high - self.low) / abs(self.value)


def derived(value, unit, note):
    return None if value is None else Stat(value, unit, note=note)


def cells(data, configs, wanted):
    """Cells of *configs* whose benchmark *wanted* accepts."""
    for bench in data.benchmarks:
        if wanted(bench):
            for config in configs:
                cell = data.cell(config, bench)
                if cell is not None and (cell.values or cell.disturbed):
                    yield cell


def pick(found):
    """The cell a headline figure comes from: the most samples, then the
    higher median; a DISTURBED-only cell when there is nothing else."""
    found = list(found)
    measured = [c for c in found if c.values]
    if measured:
        return max(measured, key=lambda c: (len(c.values), c.value))
    return found[0] if found else None


def variable(name, param=None):
    """A test of benchmarks: those of figure *name* (and parameters *param*)."""

    def wanted(bench):
        if bench.variable != name:
            return False
        return param is None or all(bench.params.get(k) == v for k, v in param.items())

    return wanted

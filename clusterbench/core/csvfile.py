"""The one CSV writer of every CSV clusterbench writes (the verdicts of
``compare --format csv``, ``trend.csv``, the report's ``summary.csv`` and plot
tables, the curves of the communication checks).

Its text cells come from run reports, which anyone can write: a cell that a
spreadsheet would take for a formula (``=HYPERLINK(...)``, ``@SUM(...)``,
``-2+3+cmd|...``) is written with a leading ``'`` (OWASP, "CSV injection"), so
that it stays text. A number stays a number, ``-0.12`` and ``-15.3%`` too.
"""

import csv
import re

#: What a spreadsheet reads as the start of a formula.
FORMULA_START = ('=', '+', '-', '@', '\t', '\r')
#: A number as Python writes one (repr of a float: 1e-05, -inf, nan), a
#: percentage ("+15.3%"), or the "-" of an empty cell of the verdict table:
#: what a spreadsheet reads as a number or as text, never as a formula.
_HARMLESS = re.compile(r'[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?%?|[-+]?(inf|nan)|-')


def cell(value):
    """*value* as written: text that would start a formula is quoted."""
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_START)
        and not _HARMLESS.fullmatch(value)
    ):
        return "'" + value
    return value


class _Writer:
    def __init__(self, out, **fmtparams):
        self._writer = csv.writer(out, **fmtparams)

    def writerow(self, row):
        return self._writer.writerow([cell(v) for v in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def writer(out, **fmtparams):
    """``csv.writer(out, **fmtparams)`` whose text cells are no formula."""
    return _Writer(out, **fmtparams)

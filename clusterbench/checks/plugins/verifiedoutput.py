"""One path from a benchmark's output file to its recorded figures.

A benchmark base (a :class:`~clusterbench.checks.plugins.judged.JudgedCheck`)
declares:

- ``output_program``: the program's name in messages (``'hpcc'``);
- ``output_parser``: its module of :mod:`clusterbench.parsers`, whose
  ``verify(text, source, **expected)`` returns the verified result and
  ``figures(result, source)`` its figures, ``{name: (value, unit)}``;
- ``output_file``: the file, relative to the stage directory (empty: the
  job's stdout); :meth:`output_path` may find it otherwise;
- :meth:`output_expected`: what ``verify`` must find (process count, size);
- ``exit_reasons``: what the program means by an exit code, if anything.

A base whose parser lives elsewhere (fabric, nodeprobe) overrides
:meth:`parse_output`; one whose figures come from curves (IMB, OSU, NetPIPE)
or add a derived figure overrides :meth:`output_figures`.

The judged check then owns the sanity function ``verified``
(:func:`verified`): a non-zero exit code, a missing or empty output file,
a parser's error and a figure that is NaN or infinite each fail it with one
line (:data:`MISSING`, :data:`EMPTY`,
:data:`NOT_A_FIGURE` are the same for every check), and the performance
variables: every figure of the verified result, so that a figure is only
recorded when the benchmark verified its result.
"""

import math
import numbers
import os

import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from clusterbench.core.errors import ClusterbenchError

#: The sanity error of a run that left no output file, for every check.
MISSING = '{file}: not written by the run (see rfm_job.err)'
#: The sanity error of a run whose output file is empty, for every check.
EMPTY = '{file}: empty, the run wrote nothing (see rfm_job.err)'
#: The sanity error of a figure that is NaN or infinite, for every check:
#: ReFrame would judge it against no bound (`nan < lower` is False).
NOT_A_FIGURE = '{program}: {figure} is {value}: not a figure'


def one_line(text):
    """*text* on one line: a parser's message never spans several."""
    return '; '.join(line.strip() for line in str(text).splitlines() if line.strip())


def read_output(path, name):
    """The text of an output file, or a one-line :class:`SanityError`."""
    try:
        with open(path) as out:
            text = out.read()
    except FileNotFoundError:
        raise SanityError(MISSING.format(file=name)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise SanityError(f'{name}: {getattr(err, "strerror", None) or err}') from None
    if not text.strip():
        raise SanityError(EMPTY.format(file=name))
    return text


@sn.deferrable
def verified_result(check):
    """The parser's verified result of *check*'s output (deferred), or a
    one-line SanityError."""
    exitcode = check.job.exitcode
    if exitcode:
        why = check.exit_reasons.get(exitcode, 'see rfm_job.err')
        raise SanityError(f'{check.output_program} exited with code {exitcode} ({why})')
    path = check.output_path()
    name = os.path.relpath(path, check.stagedir)
    text = read_output(path, name)
    try:
        return check.parse_output(text, name)
    except ClusterbenchError as err:
        raise SanityError(one_line(err)) from None


def _figures(check, result):
    """The figures of a verified result, each a finite number, or a one-line
    SanityError."""
    try:
        figures = check.output_figures(result)
    except ClusterbenchError as err:
        raise SanityError(one_line(err)) from None
    for name, (value, _) in figures.items():
        if isinstance(value, numbers.Real) and not math.isfinite(value):
            raise SanityError(
                NOT_A_FIGURE.format(
                    program=check.output_program, figure=name, value=value
                )
            )
    return figures


@sn.deferrable
def _finite_figures(check):
    _figures(check, sn.evaluate(check.verified_result()))
    return True  # also when there are none


def verified(check):
    """The deferred sanity of *check*: a verified result whose figures are
    finite numbers, and the check's further assertions."""
    # The figures too: a NaN or infinite one fails sanity, never becomes a
    # sample.
    return sn.all(
        [
            sn.assert_true(check.verified_result()),
            sn.assert_true(_finite_figures(check)),
            *check.further_sanity(),
        ]
    )


def record_figures(check):
    """Make *check*'s performance variables the figures of its verified
    result (before the performance stage)."""
    if check.is_dry_run():
        return  # nothing ran: no output to verify (reframe --dry-run)
    figures = _figures(check, sn.evaluate(check.verified_result()))
    check.perf_variables = {
        name: sn.make_performance_function(sn.defer(value), unit)
        for name, (value, unit) in figures.items()
    }

"""A skipped test keeps its reason in the run report.

ReFrame prints a skip's message but leaves it out of its JSON report, so a
skip reached the verdict table as "no reason given". In every judged check
(``JudgedCheck`` has them) and the fixtures that skip (this plugin among
their bases, or ``NPBVariables``, which assigns ``skip`` and ``skip_reason``
itself) ``skip`` and ``skip_if`` record the message, reported as the
loggable ``skip_reason``, which :mod:`clusterbench.results.runreport` shows,
also for a test skipped because a fixture it depends on was.

A loggable property, not a ReFrame variable: a check may reach the plugin
through several of its bases, and ReFrame refuses a variable inherited twice.
"""

import reframe as rfm
from reframe.core.builtins import loggable


@loggable
@property
def skip_reason(self):
    """Why the test was skipped ('' if it was not)."""
    return getattr(self, '_recorded_skip_reason', '')


def skip(self, msg=None):
    self._recorded_skip_reason = ' '.join(str(msg or '').split())
    rfm.RegressionTest.skip(self, msg)


class RecordedSkip(rfm.RegressionTestPlugin):
    """For a fixture; a judged check has it from ``JudgedCheck`` (one class
    fewer in every check)."""

    skip_reason = skip_reason
    skip = skip

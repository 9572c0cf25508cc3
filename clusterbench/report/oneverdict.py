"""The report's verdicts are the sessions' own: each figure's verdict is the
one `compare` gives the same inputs (results.judgedsession: confirmation
runs pooled, portable figures judged against their bands), and the
portable figures a session derives (an efficiency against a ceiling of the
same node) get cells of their own."""

import dataclasses

from clusterbench.judging import verdict
from clusterbench.results import judgedsession, runreport


def _figure_key(fig):
    return (fig.test, fig.system, fig.partition, fig.environ, fig.variable)


def _case_key(test, system, partition, environ, run_index):
    return (test, system, partition, environ, run_index or 0)


@dataclasses.dataclass
class Verdicts:
    """{figure key: Verdict} of the inputs judged as one table, and the
    derived portable figures of each test case."""

    verdicts: dict
    derived: dict

    def derived_of(self, case, source):
        """The portable figures derived from the figures and facts of *case*
        of the input *source*."""
        key = _case_key(case['name'], case['system'], case['partition'],
                        case['environ'], case.get('run_index'))  # fmt: skip
        return self.derived.get((source, *key), [])

    def kind(self, figs):
        """The one verdict word of the figure whose samples are *figs*, or
        None where they are not one figure of the table (a report name that
        joins placements)."""
        found = {self.verdicts.get(_figure_key(f)) for f in figs}
        if len(found) != 1 or None in found:
            return None
        return verdict.kind(found.pop())


def of_runs(runs):
    """The :class:`Verdicts` of the report's inputs (see inputs.Run), a
    session read twice (its report and the database) counted once."""
    loaded, seen, derived = judgedsession.Loaded([], [], [], [], []), set(), {}
    for run in runs:
        uuid = (run.data.get('session_info') or {}).get('uuid')
        if uuid and uuid in seen:
            continue
        seen.add(uuid)
        figures, failures = runreport.extract(run.data, run.source)
        recorded = {_figure_key(f) for f in figures}
        known = len(loaded.portable)
        judgedsession.add(loaded, run.data, run.source, figures=figures,
                          failures=failures)  # fmt: skip
        for fig in loaded.portable[known:]:
            if _figure_key(fig) not in recorded:
                key = _case_key(fig.test, fig.system, fig.partition, fig.environ,
                                fig.run_index)  # fmt: skip
                # Its band is its verdict's, never a reference (its midpoint).
                fig = dataclasses.replace(fig, ref=None)
                derived.setdefault((run.source, *key), []).append(fig)
    _, table = judgedsession.judge(loaded)
    return Verdicts(judgedsession.verdicts(table), derived)

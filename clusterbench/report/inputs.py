"""The report's inputs: ReFrame JSON reports and stored sessions."""

from dataclasses import dataclass

from clusterbench.report import heap
from clusterbench.results import judgedsession, runreport


@dataclass
class Run:
    """One input: a ReFrame JSON report or one stored session of the database."""

    source: str
    data: dict

    @property
    def info(self):
        return self.data.get('session_info') or {}


def load_reports(paths):
    """The reports at *paths*; a directory stands for its ``report.json``, and
    a session's report brings its confirmation runs' (part of the session:
    results.judgedsession)."""
    runs = []
    with heap.paused():
        # Anything there is read, or refused by runreport.load in its line
        # (a FIFO, a device, a directory, a huge file).
        for path in judgedsession.session_reports(paths):
            runs.append(Run(path, runreport.load(path)))
    return runs


def load_history(query, config):
    """The sessions of ReFrame's results database matching *query*."""
    from clusterbench.results import history

    runs = []
    for session in history.sessions(query, config):
        uuid = (session.get('session_info') or {}).get('uuid', '?')
        runreport.validate(session, f'stored session {uuid}')
        runs.append(Run(f'stored session {uuid}', session))
    return runs

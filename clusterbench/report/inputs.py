"""The report's inputs: ReFrame JSON reports and stored sessions."""

import os
from dataclasses import dataclass

from clusterbench.core.errors import ClusterbenchError
from clusterbench.report import heap
from clusterbench.results import runreport


@dataclass
class Run:
    """One input: a ReFrame JSON report or one stored session of the database."""

    source: str
    data: dict

    @property
    def info(self):
        return self.data.get('session_info') or {}


def load_reports(paths):
    """The reports at *paths*; a directory stands for its ``report.json``."""
    runs = []
    with heap.paused():
        for path in paths:
            if os.path.isdir(path):
                candidate = os.path.join(path, 'report.json')
                # Anything there is read, or refused by runreport.load in
                # its line (a FIFO, a device, a directory, a huge file).
                if not os.path.lexists(candidate):
                    raise ClusterbenchError(f'{path}: directory without report.json')
                path = candidate
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

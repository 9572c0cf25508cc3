"""Stored history: the sessions in ReFrame's results database as a baseline."""

import json
import os
import subprocess
import sys

from clusterbench.core import startedhere
from clusterbench.core.errors import ClusterbenchError
from clusterbench.results import runreport


def _reframe():
    candidate = os.path.join(os.path.dirname(sys.executable), 'reframe')
    return candidate if os.path.exists(candidate) else 'reframe'


def sessions(query, config):
    """The stored sessions matching *query* (ReFrame's query syntax)."""
    if not os.path.exists(config):
        raise ClusterbenchError(f'{config}: no such site config')
    proc = subprocess.run(
        [_reframe(), '-C', config, '--describe-stored-sessions', query],
        capture_output=True,
        text=True,
        env=startedhere.environment(),
    )
    if proc.returncode:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f'exit {proc.returncode}'
        raise ClusterbenchError(f'results database query {query!r}: {reason}')
    try:
        found = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise ClusterbenchError(
            f'results database query {query!r}: ReFrame printed no JSON'
        ) from None
    if not found:
        raise ClusterbenchError(f'results database query {query!r}: no session')
    return found


def figures(query, config):
    """The verified figures of every stored session matching *query*."""
    found = []
    for session in sessions(query, config):
        uuid = session.get('session_info', {}).get('uuid', '?')
        runreport.validate(session, f'stored session {uuid}')
        figs, _ = runreport.extract(session, f'stored session {uuid}')
        found += figs
    return found


def distinct_sessions(datas):
    """(uuid, start, figures) of each distinct session of *datas*, a list of
    (source, parsed report or stored session), oldest first: a stored session
    and the report it was written to are one session."""
    seen = {}
    for source, data in datas:
        info = data.get('session_info') or {}
        uuid = info.get('uuid') or source
        when = info.get('time_start_unix')
        if not isinstance(when, (int, float)):
            raise ClusterbenchError(f'{source}: session without time_start_unix')
        seen.setdefault(uuid, (uuid, float(when), source, data))
    return [
        (uuid, when, runreport.extract(data, source)[0])
        for uuid, when, source, data in sorted(seen.values(), key=lambda s: s[1])
    ]

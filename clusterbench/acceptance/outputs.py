"""Outputs of our acceptance programs (src/fabric): ``fabric`` and ``nodeprobe``."""

import json
import re

from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers import declarations

_FABRIC_JSON = re.compile(r'^FABRIC_JSON: (\{.*\})\s*$', re.M)
_FABRIC_DONE = re.compile(r'^FABRIC (COMPLETE|INCOMPLETE)\s*$', re.M)
_PROBE_JSON = re.compile(r'^NODEPROBE_JSON: (\{.*\})\s*$', re.M)
_PROBE_VERDICT = re.compile(r'^VERIFICATION (SUCCESSFUL|FAILED)\s*$', re.M)

#: The N x N matrices of a fabric result (None on the diagonal).
MATRICES = (
    'latency_p50_us',
    'latency_mean_us',
    'latency_p99_us',
    'latency_min_us',
    'latency_max_us',
    'latency_stalls',
    'latency_iterations',
    'bandwidth_mbs',
    'bandwidth_peak_mbs',
    'bandwidth_iterations',
    'msgrate_mmps',
    'msgrate_peak_mmps',
    'msgrate_iterations',
)

#: nodeprobe's figures: JSON key -> (declaration, scale).
PROBE_FIGURES = declarations.NODEPROBE


class OutputError(ClusterbenchError):
    """Not a complete, verified output of one of our programs."""


def _one_json(pattern, text, source, what):
    found = pattern.findall(text)
    if len(found) != 1:
        hint = (
            ' (several copies each thought they were alone: launcher and MPI '
            'library mismatched?)'
            if len(found) > 1
            else ''
        )
        raise OutputError(f'{source}: {len(found)} {what} lines, expected one{hint}')
    try:
        return json.loads(found[0])
    except json.JSONDecodeError as err:
        raise OutputError(f'{source}: malformed {what}: {err.msg}') from None


def fabric(text, source='fabric output', nodes=None, ranks=None):
    """The fabric result of a complete run, checked against what was asked.

    *nodes*: the node count requested; *ranks*: the rank count. Every pair of
    nodes must have been measured, by distinct nodes, in the expected number
    of rounds.
    """
    result = _one_json(_FABRIC_JSON, text, source, 'FABRIC_JSON')
    names = result.get('nodes') or []
    n = len(names)
    if len(set(names)) != n:
        raise OutputError(f'{source}: node names repeat: {names}')
    if nodes is not None and n != nodes:
        raise OutputError(f'{source}: ran on {n} node(s) {names}, {nodes} requested')
    if ranks is not None and result.get('ranks') != ranks:
        raise OutputError(f'{source}: {result.get("ranks")} ranks, {ranks} requested')
    expected_rounds = n - 1 if n % 2 == 0 else n
    if result.get('rounds') != expected_rounds:
        raise OutputError(
            f'{source}: {result.get("rounds")} rounds for {n} nodes, '
            f'{expected_rounds} expected'
        )
    met = set()
    for pairs in result.get('schedule', []):
        busy = [i for pair in pairs for i in pair]
        if len(busy) != len(set(busy)):
            raise OutputError(f'{source}: a node is in two pairs of one round')
        met.update(tuple(sorted(p)) for p in pairs)
    if len(met) != n * (n - 1) // 2:
        raise OutputError(f'{source}: the schedule met {len(met)} pairs of {n} nodes')
    for key in MATRICES:
        matrix = result.get(key)
        if not isinstance(matrix, list) or len(matrix) != n:
            raise OutputError(f'{source}: no {n} x {n} matrix {key}')
    done = _FABRIC_DONE.findall(text)
    if result.get('complete') is not True or done != ['COMPLETE']:
        missing = [
            f'{names[i]}-{names[j]}'
            for i in range(n)
            for j in range(n)
            if i != j and not result['latency_iterations'][i][j]
        ]
        raise OutputError(
            f'{source}: incomplete: pairs not measured: {", ".join(missing) or "?"}'
        )
    return result


def nodeprobe(text, source='nodeprobe output'):
    """The result of one verified nodeprobe run."""
    verdicts = _PROBE_VERDICT.findall(text)
    if verdicts != ['SUCCESSFUL']:
        state = verdicts[-1] if verdicts else 'line missing'
        raise OutputError(f'{source}: verification {state}')
    result = _one_json(_PROBE_JSON, text, source, 'NODEPROBE_JSON')
    if result.get('verified') is not True:
        raise OutputError(f'{source}: JSON says verified={result.get("verified")}')
    for key in PROBE_FIGURES:
        if not isinstance(result.get(key), (int, float)):
            raise OutputError(f'{source}: no numeric {key}')
    return result


def links(result):
    """One dict per pair of nodes (i < j) of a fabric result: the link's figures.

    ``stall_fraction`` is the share of round trips slower than the stall
    threshold: a TCP retransmission timeout (lost packets) makes them.
    """
    names = result['nodes']
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            iters = result['latency_iterations'][i][j] or 0
            stalls = result['latency_stalls'][i][j] or 0
            out.append(
                {
                    'a': names[i],
                    'b': names[j],
                    'latency_us': result['latency_p50_us'][i][j],
                    'latency_p99_us': result['latency_p99_us'][i][j],
                    'stalls': int(stalls),
                    'round_trips': int(iters),
                    'stall_fraction': stalls / iters if iters else None,
                    'bandwidth_ab_mbs': result['bandwidth_mbs'][i][j],
                    'bandwidth_ba_mbs': result['bandwidth_mbs'][j][i],
                    'msgrate_ab_mmps': result['msgrate_mmps'][i][j],
                    'msgrate_ba_mmps': result['msgrate_mmps'][j][i],
                }
            )
    return out

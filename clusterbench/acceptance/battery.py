"""The acceptance battery of a partition: every node at once, then the fabric.

Two ReFrame sessions into one directory: the node battery
(``NodeProbeCheck``, ``NodeCGCheck``) with ``--distribute`` (one job per node,
all at once, so the wall time does not grow with the node count), then the
fabric (``FabricCheck``: O(N) rounds); then the per-node and per-link
tables. Exit code 0 when every node and every link is accepted.
"""

import os
import subprocess
import sys
import time

from clusterbench.acceptance import links, nodes, runcases
from clusterbench.core import paths, startedhere
from clusterbench.core.errors import ClusterbenchError

PARTS = {
    'nodes': ('acceptance.py', 'node', ['--distribute']),
    'fabric': ('fabric.py', 'fabric', []),
}


def _reframe():
    here = os.path.join(os.path.dirname(sys.executable), 'reframe')
    return here if os.path.exists(here) else 'reframe'


def session(config, system, prefix, part, environ, extra=(), timeout=1800):
    """Run one part (``nodes`` or ``fabric``); return (exit code, report path)."""
    checks, tag, options = PARTS[part]
    directory = os.path.join(prefix, part)
    os.makedirs(directory, exist_ok=True)
    report = os.path.join(directory, 'report.json')
    cmd = [
        _reframe(),
        '-C',
        config,
        '--system',
        system,
        '-c',
        os.path.join(paths.get('checks'), checks),
        '-t',
        f'^{tag}$',
        '-p',
        f'^{environ}$',
        *options,
        '--prefix',
        directory,
        '--report-file',
        report,
        '--nocolor',
        *extra,
        '-r',
    ]
    with open(os.path.join(directory, 'reframe.out'), 'w') as log:
        try:
            proc = subprocess.run(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
                env=startedhere.environment(),
            )
        except subprocess.TimeoutExpired:
            raise ClusterbenchError(
                f'{part}: ReFrame did not finish in {timeout} s (see {log.name})'
            ) from None
    if not os.path.exists(report):
        raise ClusterbenchError(
            f'{part}: ReFrame wrote no report (exit {proc.returncode}); see {log.name}'
        )
    return proc.returncode, report


def run(
    config,
    system,
    prefix=None,
    environ='gnu-openmpi',
    expected_nodes=(),
    extra=(),
    z_max=None,
    min_spread=None,
    only=None,
    out=sys.stdout,
):
    """The whole battery (or *only* ``nodes`` or ``fabric``); prints the
    tables, returns the exit code."""
    # Beside the checkout; from a wheel in the launch directory, as the
    # results of `clusterbench run` (never into the installed package).
    prefix = prefix or os.path.join(
        os.getcwd() if paths.installed() else paths.CHECKOUT,
        'results',
        'acceptance',
        system.replace(':', '-'),
        time.strftime('%Y%m%dT%H%M%S'),
    )
    ok = True
    if only in (None, 'nodes'):
        ok = _nodes(
            config,
            system,
            prefix,
            environ,
            extra,
            expected_nodes,
            z_max,
            min_spread,
            out,
        )
    if only in (None, 'fabric'):
        ok = (
            _fabric(config, system, prefix, environ, extra, z_max, min_spread, out)
            and ok
        )
    print(f'\nacceptance: {"PASS" if ok else "NOT ACCEPTED"} ({prefix})', file=out)
    return 0 if ok else 1


def _population(cases, z_max, min_spread):
    spec = runcases.acceptance_spec(cases)
    z = z_max if z_max is not None else float(spec.get('z_max', 3.5))
    if min_spread is None:
        min_spread = float(spec.get('min_spread', 0.05))
    return z, min_spread


def _nodes(config, system, prefix, environ, extra, expected, z_max, min_spread, out):
    t0 = time.monotonic()
    _, report = session(config, system, prefix, 'nodes', environ, extra)
    cases = runcases.load([report])
    z, spread = _population(cases, z_max, min_spread)
    ranked = nodes.rank(
        nodes.collect(cases), z_max=z, min_spread=spread, expected=expected
    )
    print(f'Nodes ({time.monotonic() - t0:.0f} s, {report}):\n', file=out)
    print(nodes.table(ranked), file=out)
    return bool(ranked) and all(n.verdict == nodes.PASS for n in ranked)


def _fabric(config, system, prefix, environ, extra, z_max, min_spread, out):
    t0 = time.monotonic()
    _, report = session(config, system, prefix, 'fabric', environ, extra)
    fabric_cases = runcases.load([report])
    z, spread = _population(fabric_cases, z_max, min_spread)
    print(f'\nFabric ({time.monotonic() - t0:.0f} s, {report}):\n', file=out)
    ok = True
    found = links.fabric_results(fabric_cases)
    for test, env, result, link_spec in found:
        verdict = links.judge(result, link_spec, z_max=z, min_spread=spread)
        verdict.test, verdict.environ = test, env
        print(links.table(verdict), file=out)
        ok = ok and all(lk.verdict == links.PASS for lk in verdict.links)
    for case in fabric_cases:
        if runcases.failed(case):
            print(f'FAILED: {runcases.failure(case)}', file=out)
            ok = False
    return ok and bool(found)

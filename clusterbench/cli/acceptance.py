"""``clusterbench acceptance nodes|links|battery|scaling ...``: the parser and
what it prints; the work is :mod:`clusterbench.acceptance`'s.

Also ``python -m clusterbench.cli.acceptance``.
"""

import argparse
import sys

from clusterbench.acceptance import battery, links, nodes, runcases, scaling
from clusterbench.cli import numbers
from clusterbench.cli.common import CONFIG_HELP
from clusterbench.core import jsontext, paths
from clusterbench.core.errors import ClusterbenchError, parse_and_run


def _node_list(text):
    return [n for n in (text or '').replace(' ', ',').split(',') if n]


def _population(args, cases):
    """z_max and min_spread: the command line's, else the recorded spec's."""
    spec = runcases.acceptance_spec(cases)
    z_max = args.z if args.z is not None else float(spec.get('z_max', 3.5))
    spread = args.min_spread
    if spread is None:
        spread = float(spec.get('min_spread', 0.05))
    return z_max, spread


def _nodes(args):
    cases = runcases.load(args.reports)
    figures = _node_list(args.figures) or None
    z_max, min_spread = _population(args, cases)
    ranked = nodes.rank(
        nodes.collect(cases, figures),
        z_max=z_max,
        min_spread=min_spread,
        expected=_node_list(args.nodes),
    )
    if not ranked:
        raise ClusterbenchError(
            'no one-node test case in the report(s): run the battery with '
            '--distribute (one case per node)'
        )
    if args.format == 'json':
        print(jsontext.dumps(nodes.as_json(ranked), indent=1))
    else:
        print(nodes.table(ranked))
    return 0 if all(n.verdict == nodes.PASS for n in ranked) else 1


def _links(args):
    cases = runcases.load(args.reports)
    found = links.fabric_results(cases)
    failures = [
        runcases.failure(c)
        for c in cases
        if runcases.failed(c) and 'Fabric' in runcases.base_name(c)
    ]
    if not found and not failures:
        raise ClusterbenchError('no fabric result in the report(s)')
    z_max, min_spread = _population(args, cases)
    verdicts = []
    for test, environ, result, spec in found:
        verdict = links.judge(result, spec, z_max=z_max, min_spread=min_spread)
        verdict.test, verdict.environ = test, environ
        verdicts.append(verdict)
    if args.format == 'json':
        print(
            jsontext.dumps(
                {
                    'fabrics': [links.as_json(v) for v in verdicts],
                    'failures': failures,
                },
                indent=1,
            )
        )
    else:
        print('\n\n'.join(links.table(v) for v in verdicts))
        for failure in failures:
            print(f'FAILED: {failure}')
    bad = failures or any(lk.verdict != links.PASS for v in verdicts for lk in v.links)
    return 1 if bad else 0


def _scaling(args):
    rows = scaling.compute(scaling.series(runcases.load(args.reports)))
    if not rows:
        raise ClusterbenchError('no scaling test case in the report(s)')
    if args.format == 'json':
        print(jsontext.dumps(scaling.as_json(rows), indent=1))
    else:
        print(scaling.table(rows))
    return 1 if any(p.value is None for p in rows) else 0


def _battery(args):
    extra = list(args.reframe_args)
    if extra and extra[0] == '--':
        extra = extra[1:]
    return battery.run(
        args.config or paths.system_config(args.system),
        args.system,
        prefix=args.prefix,
        environ=args.environ,
        expected_nodes=_node_list(args.nodes),
        extra=extra,
        z_max=args.z,
        min_spread=args.min_spread,
        only=args.only,
    )


def parser():
    top = argparse.ArgumentParser(
        prog='clusterbench acceptance',
        description='Node and fabric acceptance, and scaling, from ReFrame reports',
    )
    sub = top.add_subparsers(dest='command', required=True)

    def common(p):
        p.add_argument('reports', nargs='+', metavar='REPORT.json')
        p.add_argument('--format', choices=['table', 'json'], default='table')

    def population(p):
        p.add_argument(
            '--z',
            type=numbers.Number('a z-score', 0, 100, above=True),
            help='robust z-score beyond which a figure is flagged (default: the '
            "partition's extras.acceptance.z_max, else 3.5)",
        )
        p.add_argument(
            '--min-spread',
            type=numbers.Number('a fraction of the median', 0, 1),
            help='smallest spread of the peers, relative to their median '
            "(default: the partition's extras.acceptance.min_spread, else 0.05); "
            'with few nodes the MAD says nothing',
        )

    nds = sub.add_parser('nodes', help='rank the nodes of a battery run')
    common(nds)
    population(nds)
    nds.add_argument('--nodes', help='the nodes expected (a,b,c): missing ones fail')
    nds.add_argument('--figures', help='judge only these (Test:var or var, a,b)')
    nds.set_defaults(func=_nodes)

    lks = sub.add_parser('links', help='judge the links of fabric runs')
    common(lks)
    population(lks)
    lks.set_defaults(func=_links)

    bat = sub.add_parser(
        'battery', help='run the node battery (all nodes at once) and the fabric'
    )
    bat.add_argument('--system', default='box:compute', help='system:partition')
    bat.add_argument('--config', help=CONFIG_HELP)
    bat.add_argument('--environ', default='gnu-openmpi')
    bat.add_argument('--prefix', help='output directory (default: results/acceptance/)')
    bat.add_argument('--nodes', help='the nodes expected (a,b,c): missing ones fail')
    bat.add_argument('--only', choices=['nodes', 'fabric'], help='one part only')
    population(bat)
    bat.add_argument('reframe_args', nargs=argparse.REMAINDER, help='after --')
    bat.set_defaults(func=_battery)

    scl = sub.add_parser('scaling', help='speedup and efficiency of scaling runs')
    common(scl)
    scl.set_defaults(func=_scaling)
    return top


def main(argv=None, prog=None):
    return parse_and_run(parser(), 'acceptance', argv, prog)


if __name__ == '__main__':
    sys.exit(main())

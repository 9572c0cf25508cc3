"""``python -m clusterbench.cli.energy status|snapshot|sample|summarize``, as
job scripts run it: the parser and what it prints (the readers are
clusterbench.machine.energy's)."""

import argparse
import signal
import socket
import sys
import threading

from clusterbench.cli import numbers
from clusterbench.core import jsontext
from clusterbench.core.errors import ClusterbenchError, parse_and_run
from clusterbench.machine import energy


def _cmd_status(args):
    reader = energy.Reader(args.root)
    host = socket.gethostname()
    if reader.available:
        zones = ', '.join(z.name for z in reader.zones)
        what = ' and '.join(
            f'RAPL ({zones})' if s == 'rapl' else 'IPMI DCMI power'
            for s in reader.sources
        )
        print(f'energy: {host}: {what}')
    else:
        print(f'energy: not available on {host}: {"; ".join(reader.reasons)}')
    return 0


def _cmd_snapshot(args):
    reader = energy.Reader(args.root)
    record = reader.header()
    if reader.available:
        record.update(reader.sample(), kind='snapshot')
    print(jsontext.dumps(record))
    return 0


def _cmd_sample(args):
    if args.interval <= 0:
        raise ClusterbenchError(f'--interval {args.interval}: must be positive')
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    reader = energy.Reader(args.root)
    try:
        with open(args.output, 'w') as out:
            energy.run_sampler(out, reader, args.interval, stop)
    except OSError as err:
        raise ClusterbenchError(
            f'{args.output}: cannot write: {err.strerror}'
        ) from None
    return 0


def _cmd_summarize(args):
    print(jsontext.dumps(energy.summarize(energy.read_records(args.samples)), indent=1))
    return 0


def parser():
    ap = argparse.ArgumentParser(
        prog='python -m clusterbench.cli.energy',
        description='Energy and power readings of this node (RAPL, IPMI DCMI).',
    )
    ap.add_argument('--root', default='/', help='file system root for /sys (tests)')
    sub = ap.add_subparsers(dest='command', required=True)
    sub.add_parser('status', help='what this node offers').set_defaults(
        func=_cmd_status
    )
    sub.add_parser('snapshot', help='one reading as JSON').set_defaults(
        func=_cmd_snapshot
    )
    smp = sub.add_parser('sample', help='sample until SIGTERM or SIGINT')
    smp.add_argument('-o', '--output', required=True)
    smp.add_argument(
        '--interval', type=numbers.SECONDS, default=5.0, help='seconds (default 5)'
    )
    smp.set_defaults(func=_cmd_sample)
    summ = sub.add_parser(
        'summarize', help='energy_j and mean_power_w of a sample file'
    )
    summ.add_argument('samples')
    summ.set_defaults(func=_cmd_summarize)
    return ap


def main(argv=None):
    return parse_and_run(parser(), 'clusterbench', argv)


if __name__ == '__main__':
    sys.exit(main())

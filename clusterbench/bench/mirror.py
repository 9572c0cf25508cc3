"""``clusterbench mirror DIR``: the default releases, for an air-gapped site.

Downloads every default benchmark release (:data:`clusterbench.bench.sources.
DEFAULTS`) into DIR under the name upstream gives it, verifies each against
its sha256 and writes ``SHA256SUMS`` (``sha256sum -c`` reads it). Copy DIR
to the site and set ``CLUSTERBENCH_MIRROR=DIR``. ``--check DIR`` verifies a
mirror without the network. ``--url NAME=URL`` and ``--sha256 NAME=HEX``
override a release (as the checks' ``-S <name>_url=`` and ``_sha256=`` do).
"""

import argparse
import os
import shutil
import sys
import tempfile

from clusterbench.bench import sources
from clusterbench.core.errors import ClusterbenchError, parse_and_run

SUMS = 'SHA256SUMS'


def _overrides(pairs, what):
    found = {}
    for pair in pairs or ():
        name, sep, value = pair.partition('=')
        if not sep or name not in sources.DEFAULTS:
            raise ClusterbenchError(
                f'--{what} {pair}: expected NAME={what.upper()} with NAME one of '
                f'{", ".join(sources.DEFAULTS)}'
            )
        found[name] = value
    return found


def releases(args):
    """``[(name, url, sha256)]`` of the releases asked for."""
    urls = _overrides(args.url, 'url')
    hashes = _overrides(args.sha256, 'sha256')
    names = args.only or list(sources.DEFAULTS)
    unknown = [n for n in names if n not in sources.DEFAULTS]
    if unknown:
        raise ClusterbenchError(
            f'--only {unknown[0]}: not a release (one of {", ".join(sources.DEFAULTS)})'
        )
    return [
        (
            n,
            urls.get(n, sources.DEFAULTS[n].url),
            hashes.get(n, sources.DEFAULTS[n].sha256),
        )
        for n in names
    ]


def _copy_into(path, directory, name):
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.partial-')
    os.close(fd)
    try:
        shutil.copyfile(path, tmp)
        os.replace(tmp, os.path.join(directory, name))
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def check(directory, wanted, out=sys.stdout):
    """Verify *directory* against *wanted*; the number of problems."""
    if not os.path.isdir(directory):
        raise ClusterbenchError(f'{directory}: no such mirror directory')
    problems = 0
    for name, url, sha256 in wanted:
        filename = sources.filename_of(url)
        path = os.path.join(directory, filename)
        if not os.path.isfile(path):
            print(f'{name:7} {filename}: missing', file=out)
            problems += 1
            continue
        got = sources.sha256_of(path)
        if got == sha256.lower():
            print(f'{name:7} {filename}: ok (sha256 {got})', file=out)
        else:
            print(f'{name:7} {path}: sha256 {got}, expected {sha256} ({url})', file=out)
            problems += 1
    return problems


def fill(directory, wanted, out=sys.stdout):
    """Download into *directory* what it lacks; the number of problems."""
    os.makedirs(directory, exist_ok=True)
    problems = 0
    sums = []
    for name, url, sha256 in wanted:
        filename = sources.filename_of(url)
        target = os.path.join(directory, filename)
        if os.path.isfile(target) and sources.sha256_of(target) == sha256.lower():
            status = 'present'
        else:
            try:
                # Through the cache (and not this mirror): a second run or a
                # checked-out cache downloads nothing.
                path, origin = sources.fetch(url, sha256, mirror='')
            except sources.SourceError as err:
                print(f'{name:7} {err}', file=out)
                problems += 1
                continue
            _copy_into(path, directory, filename)
            status = 'from the cache' if origin == 'cache' else f'downloaded ({url})'
        sums.append(f'{sha256.lower()}  {filename}\n')
        print(f'{name:7} {filename}: {status}, sha256 verified', file=out)
    with open(os.path.join(directory, SUMS), 'w') as f:
        f.writelines(sums)
    return problems


def _run(args):
    wanted = releases(args)
    if args.check:
        problems = check(args.directory, wanted)
    else:
        problems = fill(args.directory, wanted)
    return 1 if problems else 0


def parser():
    top = argparse.ArgumentParser(
        prog='clusterbench mirror',
        description='Download the default benchmark releases into DIR (verified), '
        'or --check a mirror.',
    )
    top.add_argument('directory', metavar='DIR')
    top.add_argument(
        '--check', action='store_true', help='verify DIR, download nothing'
    )
    top.add_argument('--only', nargs='+', metavar='NAME', help='only these releases')
    top.add_argument('--url', action='append', metavar='NAME=URL')
    top.add_argument('--sha256', action='append', metavar='NAME=HEX')
    top.set_defaults(func=_run)
    return top


def main(argv=None, prog=None):
    return parse_and_run(parser(), 'clusterbench mirror', argv, prog)


if __name__ == '__main__':
    sys.exit(main())

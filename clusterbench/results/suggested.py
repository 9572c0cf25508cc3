"""The `clusterbench baseline` command a line suggests (the guidance of a new
machine, a refused baseline): with the options of the run or baseline it
follows, shell-quoted, so that the command, copied as it is, measures the
same tests into the references that the next run reads.

An option is repeated unless it is what the suggested command would take by
default from the same directory; references given as clusterbench's
packaged copy are left out too: a baseline never writes there, it writes
``reference_data/`` here, which the next run reads
(clusterbench.references.directory).
"""

import os
import shlex
from dataclasses import dataclass

from clusterbench.core import paths
from clusterbench.references import directory as refdir

#: The default of ``--results`` of `run` and `baseline`.
RESULTS = 'results'


@dataclass(frozen=True)
class Options:
    """What a suggested `clusterbench baseline` repeats ('' or () when the
    default)."""

    system: str
    config: str = ''
    checks: str = ''
    results: str = ''
    references: str = ''
    wait_quiet: float = 0.0
    #: ReFrame's options, after ``--``.
    extra: tuple = ()


def of(system, config=None, checks=None, results=None, references=None,
       wait_quiet=0.0, extra=()):  # fmt: skip
    """The :class:`Options` of a run or baseline with these values (given,
    or their defaults resolved)."""
    return Options(
        system=system,
        config=_unless(config, paths.system_config(system)),
        checks=_unless(checks, paths.default('checks')),
        results=_unless(results, RESULTS),
        references=_references(references),
        wait_quiet=wait_quiet or 0.0,
        extra=tuple(extra[1:] if extra and extra[0] == '--' else extra),
    )


def baseline(options, *more, wait_quiet=None):
    """The command line: *options*, then *more* words, then ``-- extra``;
    *wait_quiet* replaces the options' ``--wait-quiet``."""
    words = ['clusterbench', 'baseline', '--system', options.system]
    for name in ('config', 'checks', 'results', 'references'):
        value = getattr(options, name)
        if value:
            words += [f'--{name}', value]
    quiet = options.wait_quiet if wait_quiet is None else wait_quiet
    if quiet:
        words += ['--wait-quiet', f'{quiet:g}']
    words += [str(word) for word in more]
    if options.extra:
        words += ['--', *options.extra]
    return shlex.join(words)


def _same(one, other):
    return os.path.realpath(str(one)) == os.path.realpath(str(other))


def _unless(value, default):
    return '' if not value or _same(value, default) else str(value)


def _references(value):
    if not value or _same(value, refdir.written()):
        return ''
    if paths.installed() and _same(value, paths.get('references')):
        return ''
    return str(value)

"""Every `clusterbench` command the adoption path prints is one the CLI
takes (issue 41): the `sh` blocks of README.md and the adoption, baseline
and references pages, parsed by the real argument parser. The README's
steps 3 and 4 are run for real, literally, in tests/cli/test_adoption_e2e.py."""

import os
import re
import shlex

import pytest
from conftest import PROJECT

from clusterbench import cli

PAGES = ('README.md', 'docs/adoption.md', 'docs/baseline.md', 'docs/references.md')


def documented_commands(page):
    """Each `clusterbench ...` line of *page*'s ``sh`` blocks: continuation
    lines joined, comments dropped, ``$(...)`` read as one word."""
    text = open(os.path.join(PROJECT, page)).read()
    for block in re.findall(r'```sh\n(.*?)```', text, re.S):
        for line in re.sub(r'\\\n\s*', '', block).splitlines():
            line = re.sub(r'"\$\([^)]*\)"', 'DIR', line.strip())
            words = shlex.split(line, comments=True)
            if words[:1] == ['clusterbench']:
                # `<the same options>`: a placeholder, not a word of the CLI.
                yield line, [w for w in words[1:] if not w.startswith('<')]


def _cases():
    return [
        pytest.param(words, id=f'{page}: {line}'[:120])
        for page in PAGES
        for line, words in documented_commands(page)
    ]


def test_the_pages_document_commands():
    pages = {c.id.split(':')[0] for c in _cases()}
    assert {'README.md', 'docs/adoption.md'} <= pages, pages


@pytest.mark.parametrize('words', _cases())
def test_every_documented_command_parses(words):
    try:
        cli.parser().parse_args(words)
    except SystemExit as refused:
        pytest.fail(f'clusterbench {shlex.join(words)}: refused (exit {refused.code})')

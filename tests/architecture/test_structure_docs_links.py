"""ARCHITECTURE.md's section "Names" is true: every file or folder of the
package it names to show the naming rule exists, and it says what a run
report and the report are. (Links of the docs pages:
tests/architecture/test_docs.py.)"""

import os
import re

from conftest import PROJECT

_PATH = re.compile(r'`((?:clusterbench|reframe_checks)/[\w/.]*)`')


def section(text, title):
    """The body of the ``## title`` section of a Markdown *text*, or None."""
    found = re.search(rf'^## {re.escape(title)}\n(.*?)(?=^## |\Z)', text, re.M | re.S)
    return found.group(1) if found else None


def missing_names(text):
    """What is wrong with the section "Names" of *text*: paths it names that
    do not exist, or the section itself missing."""
    body = section(text, 'Names')
    if body is None:
        return ['no section "## Names"']
    named = _PATH.findall(body)
    wrong = [p for p in named if not os.path.exists(os.path.join(PROJECT, p))]
    if len(named) < 8:
        wrong.append(f'only {len(named)} paths named: {named}')
    for words in ('**run report**', '**the report**', '`clusterbench/sessions/`'):
        if words not in body:
            wrong.append(f'does not say {words}')
    return wrong


def test_the_names_section_names_files_that_exist():
    with open(os.path.join(PROJECT, 'ARCHITECTURE.md'), encoding='utf-8') as f:
        text = f.read()
    assert not missing_names(text), '\n'.join(missing_names(text))


def test_a_path_that_does_not_exist_is_caught():
    text = (
        '## Names\n\n`clusterbench/parsers/nosuch.py` **run report** '
        '**the report** `clusterbench/sessions/`\n## Next\n'
    )
    wrong = missing_names(text)
    assert 'clusterbench/parsers/nosuch.py' in wrong
    assert missing_names('# A\n') == ['no section "## Names"']

"""The README is a table of contents into docs/: every link of README.md,
ARCHITECTURE.md and the pages of docs/ leads to a file that exists and, with
a ``#anchor``, to a heading of it (GitHub's anchor of the heading)."""

import glob
import os
import re

from conftest import PROJECT

#: Pages the README links that other branches of this round write; the
#: coordinator empties this set when they are merged.
EXPECTED_FROM_OTHER_BRANCHES = set()
README_MAX_LINES = 250
_LINK = re.compile(r'\]\(([^)\s]+)\)')
_FENCE = re.compile(r'^```.*?^```', re.M | re.S)


def anchor(heading):
    """GitHub's anchor of a Markdown heading."""
    text = heading.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def anchors(path):
    with open(path, encoding='utf-8') as f:
        text = _FENCE.sub('', f.read())
    return {anchor(h) for h in re.findall(r'^#+ (.*)$', text, re.M)}


def links(path):
    """(target, anchor) of every relative link of the Markdown file *path*,
    as paths relative to the project."""
    with open(path, encoding='utf-8') as f:
        text = _FENCE.sub('', f.read())
    found = []
    for target in _LINK.findall(text):
        if re.match(r'[a-z]+:', target):
            continue
        where, _, mark = target.partition('#')
        full = os.path.join(os.path.dirname(path), where) if where else path
        found.append((os.path.relpath(os.path.normpath(full), PROJECT), mark))
    return found


def documents():
    return [
        os.path.join(PROJECT, 'README.md'),
        os.path.join(PROJECT, 'ARCHITECTURE.md'),
        *sorted(glob.glob(os.path.join(PROJECT, 'docs', '*.md'))),
    ]


def test_every_link_of_the_documentation_leads_somewhere():
    broken = []
    for doc in documents():
        shown = os.path.relpath(doc, PROJECT)
        for target, mark in links(doc):
            path = os.path.join(PROJECT, target)
            if not os.path.exists(path):
                if target not in EXPECTED_FROM_OTHER_BRANCHES:
                    broken.append(f'{shown}: {target}: no such file')
            elif mark and mark not in anchors(path):
                broken.append(f'{shown}: {target}#{mark}: no such heading')
    assert not broken, '\n'.join(broken)


def test_the_readme_is_short_and_links_every_docs_page():
    readme = os.path.join(PROJECT, 'README.md')
    with open(readme, encoding='utf-8') as f:
        assert f.read().count('\n') <= README_MAX_LINES
    linked = {target for target, _ in links(readme)}
    pages = {
        os.path.relpath(p, PROJECT)
        for p in glob.glob(os.path.join(PROJECT, 'docs', '*.md'))
    }
    assert not pages - linked, f'docs pages the README does not link: {pages - linked}'
    assert EXPECTED_FROM_OTHER_BRANCHES <= linked


def test_a_heading_anchor_and_a_link_are_read_as_github_reads_them(tmp_path):
    assert (
        anchor(
            'NAS Parallel Benchmarks 3.x, MPI (`NPBCheck`, environments with `+mpi`)'
        )
        == 'nas-parallel-benchmarks-3x-mpi-npbcheck-environments-with-mpi'
    )
    page = tmp_path / 'a.md'
    page.write_text(
        '# A b\n\n[x](b.md#c-d) [y](https://e.org/f.md) [z](#a-b)\n'
        '```\n[not](a-link.md)\n```\n'
    )
    got = links(str(page))
    assert [(os.path.basename(t), m) for t, m in got] == [
        ('b.md', 'c-d'),
        ('a.md', 'a-b'),
    ]
    assert anchors(str(page)) == {'a-b'}

"""Reading clusterbench's terminal table back, by its header and rule: the
cells of each figure row, with the columns said once above the table
(``every row: partition local:default, ...``) filled in."""

import re

_TITLE = re.compile(r'^\S+: \d+ test cases?: ')


def rows(stdout):
    """[{column: cell}] of the figure rows of the first table in *stdout*."""
    lines = stdout.splitlines()
    start = next(
        i
        for i, line in enumerate(lines[:-1])
        if line.startswith('test ') and re.fullmatch(r'[- ]+', lines[i + 1])
    )
    starts = [m.start() for m in re.finditer(r'-+', lines[start + 1])]
    names = [lines[start][a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
    constant = {}
    if start and lines[start - 1].startswith('every row: '):
        for said in lines[start - 1].removeprefix('every row: ').split(', '):
            name, _, cell = said.partition(' ')
            constant[name] = cell
    found = []
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        if _TITLE.match(line):
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
        found.append({**constant, **dict(zip(names, cells))})
    return found

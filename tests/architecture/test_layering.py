"""The layout of the package follows from its module graph, not from a list.

Read from the AST of every module under ``clusterbench/`` (imports inside
functions count too: a deferred import is still a dependency):

- every subpackage sits on one layer of the table in ARCHITECTURE.md and
  imports only packages on lower layers (a program's front end, a package's
  ``__main__.py`` or a module's ``if __name__ == '__main__':`` block, may
  also import ``cli``: it only hands its arguments to the command line);
- every command-line parser is in ``cli/`` (no ``argparse`` elsewhere);
- the packages import one another without a circle;
- the package root holds only ``__init__.py`` (and ``__main__.py``);
- no Python file of the project is over 500 lines, unless it is a pure data
  table (a module whose body is only literal assignments);
- no script under ``evaluation/`` touches ``sys.path``: they import the
  installed package.
"""

import ast
import os
import re

import pytest
from conftest import PROJECT

ROOT_PACKAGE = 'clusterbench'
PACKAGE_DIR = os.path.join(PROJECT, ROOT_PACKAGE)
#: The project's own Python, for the length rule.
SOURCE_DIRS = ('clusterbench', 'tests', 'evaluation', 'reframe_checks', 'site_configs')
MAX_LINES = 500
ROOT_FILES = {'__init__.py', '__main__.py'}
ARCHITECTURE = os.path.join(PROJECT, 'ARCHITECTURE.md')
#: A row of the layer table: ``| 2 | `references`, `parsers` | owns ... |``.
_LAYER_ROW = re.compile(r'^\|\s*(\d+)\s*\|([^|]*)\|', re.M)
#: The allow-lists that the layer table replaced.
_IMPORTS_LINE = re.compile(r'^Imports:', re.M)


def _python_files(top):
    for where, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__' and d[0] != '.')
        for name in sorted(names):
            if name.endswith('.py'):
                yield os.path.join(where, name)


def _parse(path):
    with open(path, encoding='utf-8') as f:
        return ast.parse(f.read(), path)


def packages():
    """The subpackages directly under clusterbench/."""
    return sorted(
        name
        for name in os.listdir(PACKAGE_DIR)
        if os.path.isfile(os.path.join(PACKAGE_DIR, name, '__init__.py'))
    )


def root_modules():
    """Modules that sit at the package root (other than __init__/__main__)."""
    return sorted(
        name[:-3]
        for name in os.listdir(PACKAGE_DIR)
        if name.endswith('.py') and name not in ROOT_FILES
    )


def _dotted(path):
    """The dotted module name of a file under clusterbench/."""
    rel = os.path.relpath(path, PROJECT)[:-3].split(os.sep)
    if rel[-1] == '__init__':
        rel = rel[:-1]
    return '.'.join(rel)


def is_main_block(node):
    """``if __name__ == '__main__':`` at the top of a module."""
    test = getattr(node, 'test', None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == '__name__'
        and [getattr(c, 'value', None) for c in test.comparators] == ['__main__']
    )


def front_end(path):
    """The front end of the module at *path*: the statements that run only
    when it is run as a program (all of a ``__main__.py``, else its
    ``if __name__ == '__main__':`` block); the rest is its body."""
    tree = _parse(path)
    if os.path.basename(path) == '__main__.py':
        return tree.body, []
    main = [node for node in tree.body if is_main_block(node)]
    return main, [node for node in tree.body if node not in main]


def imported_units(path, here=None, part=None):
    """The top-level parts of clusterbench that the module at *path* (named
    *here*, by default from its place) imports, in the statements *part*
    (default: all): names of subpackages or root modules (``checks``,
    ``hwinfo``), each with the line of its first import."""
    here = here or _dotted(path)
    is_package = path.endswith('__init__.py')
    found = {}
    nodes = _parse(path).body if part is None else part

    def add(dotted, line):
        parts = dotted.split('.')
        if parts[0] == ROOT_PACKAGE and len(parts) > 1:
            found.setdefault(parts[1], line)

    for node in (inner for top in nodes for inner in ast.walk(top)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split('.')
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = '.'.join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ''
            if module == ROOT_PACKAGE:
                # ``from clusterbench import a``: a is a unit, or an attribute
                # of the root package such as __version__.
                for alias in node.names:
                    add(f'{ROOT_PACKAGE}.{alias.name}', node.lineno)
            else:
                add(module, node.lineno)
    units = set(packages()) | set(root_modules())
    return {unit: line for unit, line in found.items() if unit in units}


def unit_of(path):
    """The package (or root module) a file under clusterbench/ belongs to."""
    return os.path.relpath(path, PACKAGE_DIR).split(os.sep)[0].removesuffix('.py')


def layers(text=None):
    """package -> its layer number, from the table of ARCHITECTURE.md (or of
    *text*); a package named twice is an error."""
    if text is None:
        with open(ARCHITECTURE, encoding='utf-8') as f:
            text = f.read()
    found = {}
    for number, cell in _LAYER_ROW.findall(text):
        for name in re.findall(r'`([^`]+)`', cell):
            assert name not in found, f'ARCHITECTURE.md: {name} is on two layers'
            found[name] = int(number)
    return found


def body_imports(path):
    """What the module at *path* imports, but ``cli`` from its front end (see
    :func:`front_end`): a program's ``python -m`` entry only hands its
    arguments to the command line, whatever its layer."""
    main, body = front_end(path)
    found = imported_units(path, part=main)
    found.pop('cli', None)
    for unit, line in imported_units(path, part=body).items():
        found[unit] = min(line, found.get(unit, line))
    return found


def graph():
    """unit -> {imported unit: 'file:line' of one import}, over every module
    under clusterbench/ except the root __init__/__main__."""
    edges = {}
    for path in _python_files(PACKAGE_DIR):
        unit = unit_of(path)
        if unit in ('__init__', '__main__'):
            continue
        mine = edges.setdefault(unit, {})
        shown = os.path.relpath(path, PROJECT)
        for other, line in body_imports(path).items():
            if other != unit:
                mine.setdefault(other, f'{shown}:{line}')
    return edges


def circle(edges):
    """One circle of units as a list, or None."""
    done, path = set(), []

    def visit(unit):
        if unit in path:
            return path[path.index(unit) :] + [unit]
        if unit in done:
            return None
        path.append(unit)
        for other in sorted(edges.get(unit, ())):
            found = visit(other)
            if found:
                return found
        path.pop()
        done.add(unit)
        return None

    for unit in sorted(edges):
        found = visit(unit)
        if found:
            return found
    return None


def is_data_table(tree):
    """A module whose body is only its docstring, imports and assignments of
    literal values (a table kept as Python)."""
    for k, node in enumerate(tree.body):
        if (
            k == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
        ):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            try:
                ast.literal_eval(node.value)
            except ValueError:
                return False
            continue
        return False
    return True


def test_every_package_has_one_layer_in_architecture_md():
    table, known = layers(), set(packages())
    assert table, 'ARCHITECTURE.md: no layer table found'
    missing = sorted(known - set(table))
    assert not missing, (
        'ARCHITECTURE.md: no layer for ' + ', '.join(missing) + ' (add it to the '
        'table of "Subsystems and the direction of imports")'
    )
    gone = sorted(set(table) - known)
    assert not gone, 'ARCHITECTURE.md: layers for no package: ' + ', '.join(gone)


def test_every_import_goes_to_a_lower_layer():
    table, problems = layers(), []
    for package, imports in sorted(graph().items()):
        for other, where in sorted(imports.items()):
            if other not in table:
                problems.append(
                    f'{where}: imports clusterbench.{other}, a module at the '
                    f'package root (clusterbench/{other}.py), in no package'
                )
            elif package in table and table[other] >= table[package]:
                problems.append(
                    f'{where}: {package} (layer {table[package]}) imports '
                    f'{other} (layer {table[other]}); ARCHITECTURE.md allows '
                    'only lower layers'
                )
    assert not problems, '\n'.join(problems)


def test_every_argument_parser_is_in_cli():
    outside = []
    for path in _python_files(PACKAGE_DIR):
        if unit_of(path) == 'cli':
            continue
        for node in ast.walk(_parse(path)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or '']
            if 'argparse' in names:
                outside.append(f'{os.path.relpath(path, PROJECT)}:{node.lineno}')
    assert not outside, (
        'argparse outside clusterbench/cli/ (the options of every program are '
        "the command line's; see ARCHITECTURE.md): " + ', '.join(outside)
    )


def test_no_package_keeps_an_imports_line():
    # The layer table replaced the self-declared allow-lists; two sources
    # of one rule drift apart.
    stale = []
    for package in packages():
        init = os.path.join(PACKAGE_DIR, package, '__init__.py')
        if _IMPORTS_LINE.search(ast.get_docstring(_parse(init)) or ''):
            stale.append(f'clusterbench/{package}/__init__.py')
    assert not stale, (
        'an "Imports:" line is no rule any more (the layers are in '
        'ARCHITECTURE.md); drop it from: ' + ', '.join(stale)
    )


def test_the_packages_import_one_another_without_a_circle():
    edges = graph()
    found = circle(edges)
    assert found is None, 'import circle: ' + ' -> '.join(
        f'{a} ({edges[a][b]})' for a, b in zip(found, found[1:])
    )


def test_the_package_root_holds_only_init_and_main():
    extra = [f'clusterbench/{m}.py' for m in root_modules()]
    assert not extra, 'modules at the package root, in no subpackage: ' + ', '.join(
        extra
    )


def test_no_python_file_is_over_500_lines_unless_a_data_table():
    long = []
    for top in SOURCE_DIRS:
        for path in _python_files(os.path.join(PROJECT, top)):
            with open(path, encoding='utf-8') as f:
                lines = f.read().count('\n')
            if lines > MAX_LINES and not is_data_table(_parse(path)):
                long.append(f'{os.path.relpath(path, PROJECT)} ({lines} lines)')
    assert not long, f'over {MAX_LINES} lines: ' + ', '.join(long)


def test_evaluation_scripts_import_the_installed_package_not_a_path():
    # They run with the venv's Python, where clusterbench is installed; a
    # sys.path insert would hide which clusterbench they measure.
    hacks = []
    for path in _python_files(os.path.join(PROJECT, 'evaluation')):
        with open(path, encoding='utf-8') as f:
            if 'sys.path' in f.read():
                hacks.append(os.path.relpath(path, PROJECT))
    assert not hacks, 'sys.path in: ' + ', '.join(hacks)


def test_the_graph_sees_imports_inside_functions_and_relative_ones(tmp_path):
    # The checks above are only as good as the import reader.
    module = tmp_path / 'x.py'
    module.write_text(
        'import os\n'
        'from clusterbench import __version__, bench\n'
        'def f():\n'
        '    from ..judging import verdict\n'
        '    import clusterbench.core.errors\n'
        '    from . import runreport\n'
    )
    units = imported_units(str(module), here='clusterbench.results.x')
    assert set(units) == {'bench', 'judging', 'core', 'results'}
    assert units['judging'] == 4
    init = tmp_path / '__init__.py'
    init.write_text('from . import x\nfrom .. import core\n')
    units = imported_units(str(init), here='clusterbench.results')
    assert set(units) == {'results', 'core'}


def test_the_layer_table_is_read_as_numbers_and_each_package_once():
    text = (
        '| layer | packages | owns |\n|---|---|---|\n'
        '| 2 | `references`, `parsers` | the `reference_data/` files |\n'
        '| 0 | `core` | the base |\n'
    )
    # The owns column's backticks are no packages.
    assert layers(text) == {'references': 2, 'parsers': 2, 'core': 0}
    with pytest.raises(AssertionError, match='core is on two layers'):
        layers(text + '| 1 | `core` | again |\n')


def test_a_program_entry_may_import_cli_and_nothing_else_may(tmp_path):
    package = tmp_path / 'machine'
    package.mkdir()
    program = package / 'x.py'
    program.write_text(
        'import sys\n'
        'from clusterbench.core import errors\n'
        'def f():\n'
        '    from clusterbench.cli import y\n'
        "if __name__ == '__main__':\n"
        '    from clusterbench.cli import x\n'
        '    from clusterbench.report import z\n'
    )
    # The body's cli import counts (line 4), the front end's report does too.
    assert body_imports(str(program)) == {'core': 2, 'cli': 4, 'report': 7}
    program.write_text(
        "from clusterbench.core import errors\nif __name__ == '__main__':\n"
        '    from clusterbench.cli import x\n'
    )
    assert body_imports(str(program)) == {'core': 1}
    main = package / '__main__.py'
    main.write_text('from clusterbench.cli import x\nfrom clusterbench import bench\n')
    assert body_imports(str(main)) == {'bench': 2}


def test_a_circle_and_a_data_table_are_told_apart_from_their_opposites():
    assert circle({'a': {'b': ''}, 'b': {'c': ''}, 'c': {'a': ''}}) == [
        'a',
        'b',
        'c',
        'a',
    ]
    assert circle({'a': {'b': ''}, 'b': {}, 'c': {'a': ''}}) is None
    assert is_data_table(ast.parse('"""Doc."""\nX = {"a": (1, 2.0)}\nY: list = []\n'))
    assert not is_data_table(ast.parse('X = 1\ndef f():\n    pass\n'))
    assert not is_data_table(ast.parse('X = len([])\n'))

"""The test cluster's modules import one another without a circle.

Every import counts, also one inside a function: an import deferred into a
function to dodge a circle is still a circle.
"""

import ast
import os

import clusterbench.testcluster as package

PACKAGE = 'clusterbench.testcluster'
HERE = os.path.dirname(package.__file__)


def _imports(path):
    found = set()
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:
                found |= {alias.name for alias in node.names}
            elif node.module.startswith(PACKAGE + '.'):
                found.add(node.module.split('.')[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + '.'):
                    found.add(alias.name.split('.')[2])
    return found


def _graph():
    modules = {
        name[:-3]
        for name in os.listdir(HERE)
        if name.endswith('.py') and name not in ('__init__.py', '__main__.py')
    }
    return {
        m: _imports(os.path.join(HERE, f'{m}.py')) & modules for m in sorted(modules)
    }


def _circle(graph):
    """One import circle as a list of modules, or None."""
    done, path = set(), []

    def visit(module):
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return None
        path.append(module)
        for imported in sorted(graph[module]):
            circle = visit(imported)
            if circle:
                return circle
        path.pop()
        done.add(module)
        return None

    for module in graph:
        circle = visit(module)
        if circle:
            return circle
    return None


def test_no_import_circle_among_the_test_cluster_modules():
    graph = _graph()
    assert {'cluster', 'faults', 'procs', 'slurm', 'teardown'} <= set(graph)
    assert 'teardown' in graph['cluster']
    assert 'faults' in graph['teardown']
    assert _circle(graph) is None, ' -> '.join(_circle(graph))


def test_the_circle_finder_finds_a_deferred_import():
    assert _circle({'cluster': {'faults'}, 'faults': {'cluster'}}) == [
        'cluster',
        'faults',
        'cluster',
    ]

"""The site configs use no ReFrame internals (issue 42): where the command
was started is the shell's PWD, not a ReFrame object found by the garbage
collector, and whether the history can be stored is asked by the checks
through ReFrame's public options, not read from ``sys.argv``."""

import ast
import os

from conftest import PROJECT

SITE_CONFIGS = os.path.join(PROJECT, 'site_configs')


def _names(path):
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            yield f'{node.value.id}.{node.attr}'
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield f'import {getattr(node, "module", None) or alias.name}'


def test_no_site_config_reaches_into_reframe_or_the_command_line():
    for name in sorted(os.listdir(SITE_CONFIGS)):
        if not name.endswith('.py'):
            continue
        used = set(_names(os.path.join(SITE_CONFIGS, name)))
        assert not {'gc.get_objects', 'sys.argv', 'import gc'} & used, name
        internal = [u for u in used if u.startswith('import reframe.utility.osext')]
        assert not internal, (name, internal)

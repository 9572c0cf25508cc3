"""The checks stay shallow, and the hook table of ARCHITECTURE.md is true.

Every test class of ``reframe_checks/`` is loaded as ReFrame loads it (a
module from its file) and measured: how many of the project's classes its
MRO holds. A new plugin that deepens the deepest check fails here; so does
a hook of ``JudgedCheck`` that the table of ARCHITECTURE.md ("Hooks of a
judged check") does not list in the order ReFrame runs it.
"""

import importlib.util
import inspect
import os
import re
import sys

from conftest import PROJECT
from reframe.core.pipeline import RegressionTest

from clusterbench.checks.plugins.judged import JudgedCheck

#: The most project classes in a registered check's MRO (issue 42's goal,
#: met: OSU's and IMB's tests are the leaf, the base, the suite's mixin,
#: provisioning, Spack, build provenance, the communication base and the
#: judged check; HPL's sizing and the scaling node count are functions, see
#: tests/architecture/test_structure_sizing_functions.py). 15 before provisioning became
#: data (checks/provisioning.py reads a check's Source), the judged check
#: became one class (its three plugins and the declared ceilings are modules
#: its hooks call) and the run-time observers one plugin
#: (checks/plugins/observed.py).
MAX_PROJECT_CLASSES = 8
#: ReFrame's stages in the order it runs them.
STAGES = ('init', 'setup', 'compile', 'compile_wait', 'run', 'run_wait')
STAGES += ('sanity', 'performance', 'cleanup')


def _project_classes(cls):
    return [
        k
        for k in cls.__mro__
        if k.__module__.startswith(('clusterbench.', 'reframe_checks_'))
    ]


def _registered_checks():
    folder = os.path.join(PROJECT, 'reframe_checks')
    found = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.py'):
            continue
        module_name = f'reframe_checks_{name[:-3]}'
        spec = importlib.util.spec_from_file_location(
            module_name, os.path.join(folder, name)
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, RegressionTest)
                and value.__module__ == module_name
            ):
                found[attr] = value
    return found


def test_no_check_is_deeper_than_the_limit():
    checks = _registered_checks()
    assert 'OSUPointToPointCheck' in checks and 'StreamCheck' in checks, checks
    depth = {name: len(_project_classes(cls)) for name, cls in checks.items()}
    deepest = max(depth.values())
    assert deepest <= MAX_PROJECT_CLASSES, sorted(depth.items(), key=lambda x: -x[1])


def test_every_check_with_a_portable_figure_records_the_declared_ceilings():
    """A site's own peak and bands reach the portable judge from any of these
    checks alone (results/portable.py reads them from the run's cases)."""
    checks = _registered_checks()
    portable = (
        'HPLCheck',
        'HPCCCheck',
        'CGSolverCheck',
        'OSUPointToPointCheck',
        'IMBPointToPointCheck',
        'NetPIPECheck',
    )
    for name in portable:
        space = checks[name]._rfm_var_space
        assert {'peak_gflops_per_node', 'portable_bands', 'link_peak'} <= set(space), (
            name
        )


def _run_order(cls):
    """The names of *cls*'s hooks in the order ReFrame runs them."""
    hooks = [h.fn for h in cls._rfm_hook_registry]
    order = []
    for stage in STAGES:
        for when in ('pre', 'post'):
            here = [
                (last, fn.__name__)
                for fn in hooks
                for attached, last in fn._rfm_attach
                if attached == f'{when}_{stage}'
            ]
            order += [n for last, n in here if not last]
            order += [n for last, n in here if last]
    return order


def _table_hooks():
    with open(os.path.join(PROJECT, 'ARCHITECTURE.md'), encoding='utf-8') as f:
        text = f.read()
    section = text.split('## Hooks of a judged check', 1)[1].split('\n## ', 1)[0]
    return [
        m.group(1)
        for m in re.finditer(r'^\|[^|]*\| `(\w+)` \|', section, re.M)
        if m.group(1) != 'verified'  # the sanity function, not a hook
    ]


def test_the_hook_table_lists_every_hook_in_run_order():
    assert _table_hooks() == _run_order(JudgedCheck)

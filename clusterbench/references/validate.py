"""Validation of reference files (ReFrame 4.10 external format), with line numbers.

ReFrame reports a malformed reference file late and vaguely; clusterbench
checks every file up front and names the file, line and key at fault.
"""

import glob
import math
import numbers
import os
import re

import yaml

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict, view, vocabulary
from clusterbench.references import directory as refdir
from clusterbench.references import store as refstore
from clusterbench.references import yamlfile
from clusterbench.references.yamlfile import ReferenceFileError
from clusterbench.site.contract import PartitionSpec

KNOWN_UNITS = vocabulary.UNITS
_SPECIAL_INDEX = re.compile(
    r'^\$(system|partition|environ|processor\.\w+|dev\.\w+\.\w+)$'
)
_ATTRIBUTE = re.compile(r'^[A-Za-z_]\w*$')


def unit_of(entry):
    """The unit of a reference entry ``[ref, lower, upper, unit]``, '' without."""
    return entry[3] if isinstance(entry, list) and len(entry) > 3 else ''


def _where(path, node, keys):
    line = node.start_mark.line + 1 if node is not None else 0
    key = ' > '.join(str(k) for k in keys)
    return f'{path}:{line}: {key}' if key else f'{path}:{line}'


def _scalar(node):
    # Composed nodes carry their resolved tags: construct them directly
    # (a serialize and re-parse per node made `references check` slow).
    if node is None:
        return None
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def _mapping(path, node, keys, what):
    if not isinstance(node, yaml.MappingNode):
        raise ReferenceFileError(f'{_where(path, node, keys)}: expected {what}')
    return [(key_node, _scalar(key_node), value) for key_node, value in node.value]


def check_file(path):
    """Validate one reference file; return {test: number of figures}."""
    root = yamlfile.compose(path)
    counts = {}
    for _, test, body in _mapping(path, root, [], 'a mapping of test names'):
        if not isinstance(test, str) or not _ATTRIBUTE.match(test):
            raise ReferenceFileError(
                f'{_where(path, body, [test])}: test name must be a class name'
            )
        counts[test] = _check_test(path, test, body)
    return counts


def _check_test(path, test, body):
    entries = _mapping(path, body, [test], 'a mapping of references')
    depth = 1
    for _, key, value in entries:
        if key == '$index':
            index = _scalar(value)
            if (
                not isinstance(index, list)
                or not index
                or not all(
                    isinstance(k, str)
                    and (_SPECIAL_INDEX.match(k) or _ATTRIBUTE.match(k))
                    for k in index
                )
            ):
                raise ReferenceFileError(
                    f'{_where(path, value, [test, "$index"])}: $index must list '
                    f'test attributes or $system/$partition/$environ/'
                    f'$processor.<attr>/$dev.<type>.<attr>'
                )
            depth = len(index)
    figures = 0
    for _, key, value in entries:
        if key != '$index':
            figures += _check_level(path, value, [test, key], depth - 1)
    return figures


def _check_level(path, node, keys, remaining):
    if remaining > 0:
        return sum(
            _check_level(path, value, keys + [key], remaining - 1)
            for _, key, value in _mapping(path, node, keys, 'a mapping (index level)')
        )
    count = 0
    for _, var, value in _mapping(path, node, keys, 'a mapping of figures'):
        _check_tuple(path, value, keys + [var])
        count += 1
    return count


def _check_tuple(path, node, keys):
    where = _where(path, node, keys)
    entry = _scalar(node)
    if isinstance(entry, list) and entry and entry[0] == '$xfail':
        if len(entry) != 3 or not isinstance(entry[1], str):
            raise ReferenceFileError(
                f"{where}: expected ['$xfail', message, [ref, lower, upper, unit]]"
            )
        entry = entry[2]
    problem = entry_problem(keys[-1], entry)
    if problem:
        raise ReferenceFileError(f'{where}: {problem}')


def entry_problem(variable, entry):
    """'' for a reference entry ``[ref, lower, upper, unit]`` of the figure
    *variable* that ReFrame reads and a run can judge, else why not (one
    phrase): what every reader refuses, and so what an update never writes."""
    if not isinstance(entry, list) or len(entry) not in (3, 4):
        return f'expected [reference, lower, upper, unit], got {entry!r}'
    ref, lower, upper = entry[:3]
    if not _is_number(ref):
        hint = ''
        if isinstance(ref, str) and re.fullmatch(r'[-+]?[\d.]+e\d+', ref):
            hint = ' (YAML reads 1.0e6 as text: write 1.0e+6)'
        return f'reference {ref!r} is not a number{hint}'
    if not math.isfinite(ref):
        return f'reference {ref!r} is not a finite number'
    # NaN compares false with everything (`nan > 0` is False): only a finite
    # threshold is one; an infinite one is written null.
    if lower is not None and (not _is_finite(lower) or lower > 0):
        return f'lower threshold {lower!r} must be a number <= 0 or null'
    if upper is not None and (not _is_finite(upper) or upper < 0):
        return f'upper threshold {upper!r} must be a number >= 0 or null'
    if len(entry) == 4 and not (isinstance(entry[3], str) and entry[3] in KNOWN_UNITS):
        return f'unknown unit {entry[3]!r}'
    # A figure no benchmark declares is never recorded: its reference never
    # judges anything (a typo, or a unit the check does not record it in).
    return vocabulary.undeclared(str(variable), entry[3] if len(entry) == 4 else None)


def _is_number(value):
    """A real number, NaN and infinities included (see _is_finite)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_finite(value):
    return _is_number(value) and math.isfinite(value)


def check_directory(root, interrupted_ok=False):
    """Validate every reference file of every system directory under *root*
    (``<root>/<system>/*.yaml``); return their counts. A directory that an
    interrupted update left half applied is refused, unless *interrupted_ok*
    (`references check`, which names what repair will do)."""
    if not os.path.isdir(root):
        raise ReferenceFileError(f'{root}: no such reference directory')
    stray = refdir.stray_files(root)
    if stray:
        raise ReferenceFileError(
            f'{stray[0]}: outside every system directory, ReFrame never reads it: '
            f'move it to {os.path.join(root, "<system>", os.path.basename(stray[0]))}'
        )
    counts = {}
    for system in refdir.systems(root):
        folder = os.path.join(root, system)
        if not interrupted_ok:
            refstore.refuse_half_applied(folder)
        for path in sorted(glob.glob(os.path.join(folder, '*.yaml'))):
            counts[path] = check_file(path)
    return counts


def known_names(site_configs_dir, checks_dir):
    """Systems, partitions, environments in the site configs; registered checks."""
    import ast
    import runpy

    systems, partitions, environs = set(), set(), set()
    for path in sorted(glob.glob(os.path.join(site_configs_dir, '*.py'))):
        config = runpy.run_path(path).get('site_configuration')
        if not config:
            continue
        for system in config.get('systems', []):
            systems.add(system['name'])
            for part in system.get('partitions', []):
                partitions.add(f'{system["name"]}:{part["name"]}')
        environs.update(env['name'] for env in config.get('environments', []))
    checks = set()
    for path in sorted(glob.glob(os.path.join(checks_dir, '*.py'))):
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                'simple_test' in ast.unparse(d) for d in node.decorator_list
            ):
                checks.add(node.name)
    return {
        '$system': systems,
        '$partition': partitions,
        '$environ': environs,
        'checks': checks,
    }


def _composed(directory):
    """(path, YAML node tree) of every reference file, by name."""
    for path in sorted(glob.glob(os.path.join(directory, '*.yaml'))):
        yield path, yamlfile.compose(path)


def stale_entries(directory, site_configs_dir, checks_dir):
    """Reference entries of the system directory *directory* naming a check,
    system, partition or environment that no longer exists (the classic rot
    of reference stores), or another system (ReFrame never reads them there)."""
    known = known_names(site_configs_dir, checks_dir)
    system = os.path.basename(os.path.normpath(directory))
    problems = []
    if system not in known['$system']:
        problems.append(f'{directory}: system {system!r} is in no site config')
    # Only this system's partitions are found in its directory.
    known['$partition'] = {
        p for p in known['$partition'] if p.split(':', 1)[0] == system
    }
    known['$system'] = {system}
    for path, root in _composed(directory):
        for key_node, body in root.value:
            test = key_node.value
            if test not in known['checks']:
                problems.append(
                    f'{_where(path, key_node, [test])}: no such check in {checks_dir}/'
                )
                continue
            index = ['$partition']
            for k, v in body.value:
                if k.value == '$index':
                    index = _scalar(v)
            levels = [(n, v) for n, v in body.value if n.value != '$index']
            problems += _stale_levels(path, [test], levels, index, known)
    return problems


def _stale_levels(path, keys, levels, index, known):
    if not index:
        return []
    problems = []
    wanted = known.get(index[0])
    for key_node, value in levels:
        name = _scalar(key_node)
        if (
            wanted is not None
            and name not in wanted
            and not any(isinstance(name, str) and re.fullmatch(name, w) for w in wanted)
        ):
            problems.append(
                f'{_where(path, key_node, keys + [name])}: '
                + (
                    _elsewhere(index[0], name, path)
                    or f'{index[0][1:]} {name!r} is in no site config'
                )
            )
        elif isinstance(value, yaml.MappingNode):
            problems += _stale_levels(
                path, keys + [name], value.value, index[1:], known
            )
    return problems


def _elsewhere(kind, name, path):
    """What is wrong with a system or partition of another system than the
    one whose directory holds *path* ('' if it is of that system)."""
    if kind not in ('$system', '$partition') or not isinstance(name, str):
        return ''
    folder = os.path.dirname(os.path.abspath(path))
    system = os.path.basename(folder)
    other = name.split(':', 1)[0]
    if other == system:
        return ''
    where = os.path.join(os.path.dirname(os.path.dirname(path)) or '.', other)
    return (
        f'{kind[1:]} {name!r} is not of system {system!r}: ReFrame never reads '
        f'it here; its references belong in {where}/'
    )


def wide_tolerances(directory, threshold=0.10):
    """Lines for each figure whose band is wider than *threshold* on its bad
    side (both sides for a figure with no better direction): a regression of
    *threshold* stays inside it and cannot be flagged."""
    from clusterbench.judging import vocabulary

    warnings = []
    for path, root in _composed(directory):
        for key_node, body in root.value:
            depth = 1
            for k, v in body.value:
                if k.value == '$index':
                    depth = len(_scalar(v) or [None])
            for k, v in body.value:
                if k.value != '$index':
                    warnings += _wide(path, [key_node.value, _scalar(k)], v, depth - 1)
    found = []
    for where, var, entry in warnings:
        ref, lower, upper = entry[:3]
        unit = unit_of(entry)
        better = vocabulary.direction(var, unit)
        if ref is not None and ref < 0:
            lower, upper = upper, lower  # ReFrame flips the band
        sides = {
            vocabulary.HIGHER: [lower],
            vocabulary.LOWER: [upper],
        }.get(better, [lower, upper])
        widths = [abs(t) if t is not None else math.inf for t in sides]
        if vocabulary.is_share(var, unit) and ref is not None:
            # A share near zero is judged in points of the whole (verdict).
            widths = [verdict.bad_side_width(var, unit, ref, *entry[1:3])]
        if not wider(max(widths), threshold):
            continue
        found.append(
            f'{where} > {var}: {view.band(lower, upper)}: '
            f'a {threshold * 100:.0f} % regression cannot be flagged'
        )
    return found


def wider(width, threshold):
    """A band *width* wider than *threshold*: a ±10 % band computed back
    from its bounds (0.10000000000000003) is not wider than 10 %."""
    return width > threshold * (1 + 1e-9)


def _wide(path, keys, node, remaining):
    if not isinstance(node, yaml.MappingNode):
        return []
    if remaining > 0:
        found = []
        for k, v in node.value:
            found += _wide(path, keys + [_scalar(k)], v, remaining - 1)
        return found
    found = []
    for k, v in node.value:
        entry = _scalar(v)
        if isinstance(entry, list) and entry and entry[0] == '$xfail':
            entry = entry[2]
        if isinstance(entry, list) and len(entry) in (3, 4):
            found.append((_where(path, k, keys), _scalar(k), entry))
    return found


def machine_kinds(site_configs_dir):
    """{cpu_kind: [system:partition, ...]} of every partition of the site
    configs (``extras.cpu_kind``, computed when a config loads)."""
    kinds = {}
    for path in sorted(glob.glob(os.path.join(site_configs_dir, '*.py'))):
        for where, spec in partition_specs(path):
            kind = spec.cpu_kind
            if kind:
                kinds.setdefault(str(kind), []).append(where)
    return kinds


def partition_specs(path):
    """(system:partition, PartitionSpec) of every partition of the site
    config *path* (run as ReFrame loads it; a bad extras key is one line)."""
    import runpy

    try:
        config = runpy.run_path(path).get('site_configuration')
    except ClusterbenchError:
        raise  # common.py's builders refused a name, at the config's line
    except Exception as err:  # noqa: BLE001 - a site file can raise anything
        raise ClusterbenchError(f'{path}: cannot load: {err}') from None
    for system in (config or {}).get('systems', []):
        for part in system.get('partitions', []):
            yield f'{system["name"]}:{part["name"]}', PartitionSpec.of(part, path)


def kind_entries(path):
    """(test, keys above it, cpu_kind, its subtree) of every entry of the
    reference file *path* whose ``$index`` has ``cpu_kind``."""
    data = yamlfile.load(path)
    for test, body in data.items() if isinstance(data, dict) else ():
        index = body.get('$index') if isinstance(body, dict) else None
        if not index or 'cpu_kind' not in index:
            continue
        depth = index.index('cpu_kind')
        levels = [([test], {k: v for k, v in body.items() if k != '$index'})]
        for _ in range(depth):
            levels = [
                (keys + [k], v)
                for keys, tree in levels
                if isinstance(tree, dict)
                for k, v in tree.items()
            ]
        for keys, tree in levels:
            for kind, subtree in tree.items() if isinstance(tree, dict) else ():
                yield test, keys, kind, subtree


def unmatched_kinds(directory, site_configs_dir):
    """References whose ``cpu_kind`` no partition of the site configs has:
    made on another kind of machine (they apply to none here)."""
    kinds = machine_kinds(site_configs_dir)
    here = ', '.join(sorted(kinds)) or 'none declared'
    found = []
    for path in sorted(glob.glob(os.path.join(directory, '*.yaml'))):
        for _, keys, kind, _ in kind_entries(path):
            if str(kind) not in kinds:
                where = ' > '.join(map(str, keys + [kind]))
                found.append(
                    f'{path}: {where}: cpu_kind {kind!r} is no machine of '
                    f'the site configs (here: {here})'
                )
    return found

"""Hostile inputs for tests/cli/test_fuzz_hostile.py: hypothesis strategies.

Every strategy starts from a VALID input (the run report and the reference
files of tests/references/test_reftransaction.py, with the digests the checks keep) and
breaks it in one place: a wrong type or an extreme value at a random path,
NaN or an infinity, a lone surrogate or a control character in a name,
nesting 100000 deep, a duplicate key, YAML anchors and aliases. What a dict
cannot hold (raw JSON tokens, duplicate keys, deep nesting, aliases) is
written as text. Each input says whether it is *definitely* invalid (the
command must then exit non-zero) or may still be valid.
"""

import copy
import functools
import json
import os
import re
import tempfile
from dataclasses import dataclass

import yaml
from hostile_trees import (
    DEEP,
    NONFINITE,
    Raw,
    a_path,
    at,
    deep_text,
    other_than,
    paths,
    replaced,
    show,
    spoiled_name,
    to_json,
    to_yaml,
)
from hypothesis import strategies as st
from test_reftransaction import REFERENCES, run_report

from clusterbench.references import provenance as refprov


@dataclass(frozen=True, repr=False)
class Hostile:
    """One hostile input: its *text*, what was done (*kind*, *detail*) and
    *where*, and whether no reading of it can be valid (*definite*)."""

    text: str
    kind: str
    detail: str
    where: str
    definite: bool

    def __str__(self):
        what = 'invalid' if self.definite else 'maybe valid'
        return f'{self.kind} ({self.detail}) at {self.where}: {what}'

    # hypothesis shows a failing input by its repr: not 200 kB of brackets.
    __repr__ = __str__


# ---------------------------------------------------------------- valid bases

#: What the plugins keep in a test case (tests/report/test_report_assemble.py and
#: real sessions show these shapes).
DIGESTS = {
    'run_conditions': {
        'format': 'clusterbench-conditions/1', 'wall_s': 0.142, 'ranks': 2,
        'cpus': 2, 'steal_share': 0.0, 'other_cpu_share': 0.01,
        'ranks_cpu_share': 0.97, 'load_before': 1.76, 'mhz_before': 2100.0,
        'mhz_after': 2100.0, 'absent': {},
    },
    'mpi_profile_summary': {
        'nranks': 2, 'mpi_library': 'Open MPI v4.1.4', 'mpi_time_share': 0.05,
        'wall_s': {'min': 4.2, 'mean': 4.3, 'max': 4.4},
        'mpi_s': {'min': 0.2, 'mean': 0.21, 'max': 0.22},
        'share': {'min': 0.04, 'mean': 0.05, 'max': 0.06},
        'functions': {
            'MPI_Allreduce': {
                'calls': 700, 'time_mean_s': 0.15, 'time_max_s': 0.16, 'bytes': 5600,
            },
            'MPI_Isend': {'calls': 1400, 'time_mean_s': 0.06, 'time_max_s': 0.07},
        },
        'histograms': {'point-to-point': [0, 0, 0, 4, 1400], 'collective': [700]},
    },
    'node_facts': {
        'vm': {
            'host': 'vm', 'cpu': 'AMD EPYC 7763', 'topology': '1 socket x 2 cores',
            'threads': 2, 'memory_gib': 7.7, 'kernel': '6.1.0',
            'mpi': ['Open MPI 4.1.4'], 'compiler': {'gcc': '12.2.0'},
        }
    },
    'energy_summary': {'available': False, 'host': 'vm', 'reason': 'no RAPL'},
}  # fmt: skip

CURVES = {
    'netpipe': {
        'columns': ['bytes', 'latency_us', 'bandwidth_mbs'],
        'units': {'latency': 'us', 'bandwidth': 'MB/s'},
        'rows': [[1, 0.5, 2.0], [1024, 1.5, 700.0], [1048576, 100.0, 10000.0]],
        'meta': {'mode': 'pingpong'},
    }
}

_WHERE = {'system': 'local', 'partition': 'default', 'environ': 'gnu-openmpi'}

#: A fixture that was skipped, and a test skipped for its sake.
SKIPPED_CASES = [
    {
        'name': 'NPBRelease',
        'display_name': 'NPBRelease ~local',
        'unique_name': 'NPBRelease_b9a43d57',
        **_WHERE,
        'result': 'skip',
        'fixture': True,
        'skip_reason': 'no NPB tree: give -S npb_source=DIR',
    },
    {
        'name': 'NPBCheck %benchmark=bt',
        'display_name': 'NPBCheck %benchmark=bt',
        'unique_name': 'NPBCheck_2',
        **_WHERE,
        'result': 'skip',
        'fixture': False,
        'dependencies_actual': [
            ['NPBRelease_b9a43d57', 'local:default', 'gnu-openmpi']
        ],
    },
]

#: A test case that failed (the valid report with it exits 1).
FAILED_CASE = {
    'name': 'NPBCheck %benchmark=cg',
    'display_name': 'NPBCheck %benchmark=cg',
    'unique_name': 'NPBCheck_1',
    **_WHERE,
    'result': 'fail',
    'fixture': False,
    'fail_phase': 'sanity',
    'fail_reason': 'sanity error: NPB exited with code 139',
    'perfvalues': {},
}


@functools.cache
def _valid_report():
    with tempfile.TemporaryDirectory() as tmp:
        with open(run_report(os.path.join(tmp, 'r.json'))) as f:
            report = json.load(f)
    report['session_info'].update(
        hostname='vm',
        time_start='20261126T172129+0000',
        time_start_unix=1795713689.3,
        time_end_unix=1795713699.5,
        version='4.10.4',
        cmdline='reframe -r',
    )
    cases = report['runs'][0]['testcases']
    for index, case in enumerate(cases):
        case.update(
            num_tasks=2,
            run_index=0,
            uuid=f's-new:0:{index}',
            job_completion_time_unix=1795713690.0 + index,
            fail_phase=None,
            fail_reason=None,
        )
    cg, _, netpipe = cases
    cg.update(DIGESTS)
    netpipe['curves'] = CURVES
    cases += SKIPPED_CASES
    report['session_info']['num_cases'] = len(cases)
    return report


def valid_report(failed=False):
    """A fresh copy of the valid run report (a dict): every figure passes,
    or one more test case *failed*."""
    report = copy.deepcopy(_valid_report())
    if failed:
        report['runs'][0]['testcases'].append(copy.deepcopy(FAILED_CASE))
    return report


#: The reference files broken, and the one provenance file.
REFERENCE_FILES = ('local/cgsolver.yaml', 'local/hpcc.yaml', 'local/netpipe.yaml')
PROVENANCE_FILE = 'local/provenance/netpipe.yaml'


@functools.cache
def valid_text(rel):
    with open(os.path.join(REFERENCES, rel)) as f:
        return f.read()


def valid_yaml(rel):
    return yaml.safe_load(valid_text(rel))


def provenance_of(rel):
    return rel.replace('local/', f'local/{refprov.PROVENANCE_DIR}/', 1)


def consistent_provenance(rel, text):
    """The text of reference file *rel*'s provenance, with the hash of each
    entry that *text* (its hostile version) changed made to match: as an
    update would leave it, so that only the hostile part can make
    `references check` fail, not a mismatch with its provenance."""
    prov = valid_text(provenance_of(rel))
    try:
        new = refprov.leaves(yaml.safe_load(text))
    except Exception:  # what PyYAML cannot read keeps its provenance
        return prov
    for key, leaf in refprov.leaves(valid_yaml(rel)).items():
        if key in new:
            old_hash = refprov.entry_hash(leaf)
            prov = prov.replace(old_hash, refprov.entry_hash(new[key]))
    return prov


# ------------------------------------------------------------- run reports

#: The fields every test case has as strings.
_NAMES = ('name', 'display_name', 'system', 'partition', 'environ')


def _perfvalue_numbers(tree):
    """Paths of the value, reference, lower and upper of every figure."""
    return [
        p
        for p in paths(tree)
        if len(p) == 7
        and p[4] == 'perfvalues'
        and p[-1] in (0, 1, 2, 3)
        and at(tree, p) is not None
    ]


def _names_in_report(tree):
    """Paths of what names a test, a place or a figure."""
    found = paths(tree)
    return [p for p in found if len(p) == 5 and p[4] in (*_NAMES, 'unique_name')] + [
        p for p in found if len(p) in (6, 7) and p[4] == 'perfvalues' and p[-1] != 0
    ]


def _required_type(path):
    """The type the value at *path* of a run report must have, or None."""
    if len(path) < 2:
        return {(): dict, ('session_info',): dict, ('runs',): list}.get(path)
    if path[0] != 'runs':
        return None
    shape = {
        2: dict,  # a run
        3: list,  # its test cases
        4: dict,  # a test case
        5: str if path[-1] in _NAMES else None,
        6: list if path[4:5] == ('perfvalues',) else None,
        # The value of a figure (null: not measured).
        7: (int, float, type(None)) if path[4:5] == ('perfvalues',) else None,
    }
    if len(path) == 7 and path[-1] != 0:
        return None  # reference, lower, upper: see the nonfinite kind
    return shape.get(len(path))


def _wrong_in_report(path, value):
    kind = _required_type(path)
    if kind is None:
        return False
    return not isinstance(value, kind) or (isinstance(value, bool) and kind is not dict)


REPORT_KINDS = ['wrong type', 'nonfinite', 'name', 'deep', 'duplicate key', 'raw token']


@st.composite
def hostile_reports(draw):
    """A valid run report broken in one place (a :class:`Hostile`)."""
    # A quarter with a failed test case: its fields broken too.
    report = valid_report(failed=draw(st.integers(0, 3)) == 0)
    kind = draw(st.sampled_from(REPORT_KINDS))
    if kind == 'wrong type':
        path = draw(a_path(report, grouped=True))
        value = draw(other_than(at(report, path)))
        text = to_json(replaced(report, path, value))
        definite = _wrong_in_report(path, value)
        return Hostile(text, kind, f'{value!r:.40}', show(path), definite)
    if kind in ('nonfinite', 'raw token'):
        path = draw(st.sampled_from(_perfvalue_numbers(report)))
        if kind == 'nonfinite':
            value = draw(NONFINITE)
            detail, nan = repr(value), value != value
        else:
            # Tokens the JSON reader turns into an infinity or an integer no
            # float can hold, or refuses.
            huge = '9' * 400
            tokens = ['1e999', '-1e999', '-NaN', '-Infinity', huge, '-' + huge]
            detail = draw(st.sampled_from(tokens))
            value, nan = Raw(detail), False
        # An infinite bound is no bound: only the value and reference must be
        # finite; NaN is nowhere a number.
        definite = nan or path[-1] in (0, 1)
        text = to_json(replaced(report, path, value))
        return Hostile(text, kind, detail[:12], show(path), definite)
    if kind == 'name':
        tree, where = spoiled_name(draw, report, _names_in_report(report))
        return Hostile(to_json(tree), kind, 'bad characters', where, False)
    if kind == 'deep':
        path = draw(a_path(report, grouped=True))
        text = to_json(replaced(report, path, Raw(deep_text(draw, 'json'))))
        return Hostile(text, kind, f'{DEEP} levels', show(path), True)
    objects = [p for p in paths(report) if isinstance(at(report, p), dict)]
    path = draw(st.sampled_from([p for p in objects if at(report, p)]))
    obj = at(report, path)
    key = draw(st.sampled_from(sorted(obj)))
    twice = f'{json.dumps(key)}: {to_json(draw(other_than(obj[key])))}'
    body = to_json(obj)[1:-1]
    # Either one first: no reader may silently pick one of them.
    text = f'{{{twice}, {body}}}' if draw(st.booleans()) else f'{{{body}, {twice}}}'
    text = to_json(replaced(report, path, Raw(text)))
    return Hostile(text, kind, repr(key), show(path), True)


# ---------------------------------------------------------- reference files


def _tuples(tree):
    """Paths of the figure tuples (reference, lower, upper, unit)."""
    return [
        p
        for p in paths(tree)
        if p
        and p[-1] != '$index'
        and isinstance(at(tree, p), list)
        and len(at(tree, p)) == 4
        and isinstance(at(tree, p)[3], str)
    ]


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _wrong_in_reference(tree, path, value):
    """True if *value* at *path* of a reference file cannot be valid: a
    figure that is not a tuple, a reference that is not a number."""
    tuples = _tuples(tree)
    if path in tuples:
        return not isinstance(value, list) or len(value) not in (3, 4)
    return path[:-1] in tuples and path[-1] == 0 and not _number(value)


#: ``key: value`` on one line (a figure, a provenance field).
_LEAF = re.compile(r'^( *)([^\s:#\'][^:]*): (\S.*)$')


def laughs(width, depth):
    """Lines of a test whose references are aliases of aliases: *width* **
    *depth* entries of a valid shape (``$index`` of *depth* + 1 levels), in
    some 120 bytes a level. Every level is defined under a key of its own
    (``pJ``, a chain of ``d`` down to its depth), then aliased *width* times
    by the next."""
    names = ', '.join(f'a{i}' for i in range(1, depth + 1))
    lines = ['Laughs:', f'  $index: [$partition, {names}]']
    for j in range(depth + 1):
        below = ', '.join(f'k{k}: *L{j - 1}' for k in range(width))
        level = f'&L{j} {{{below}}}' if j else '&L0 {hpl: [1.0, -0.1, 0.1, GFlop/s]}'
        chain = depth - j
        lines.append(f'  p{j}: ' + '{d: ' * chain + level + '}' * chain)
    return lines


REFERENCE_KINDS = ['wrong type', 'name', 'deep', 'duplicate key', 'alias', 'raw']


@st.composite
def hostile_references(draw, bomb_limit=2000):
    """(file, :class:`Hostile`): one file of reference_data/ broken in one place.

    Aliases expand to *bomb_limit* nodes at most here (this runs in the test's
    own process); the billion laughs are tests/cli/test_fuzz_hostile.py's own.
    """
    rel = draw(st.sampled_from(REFERENCE_FILES + (PROVENANCE_FILE,)))
    tree = valid_yaml(rel)
    reference = rel in REFERENCE_FILES
    kind = draw(st.sampled_from(REFERENCE_KINDS + ['nonfinite'] * reference))
    if kind == 'wrong type':
        path = draw(a_path(tree))
        value = draw(other_than(at(tree, path)))
        definite = reference and _wrong_in_reference(tree, path, value)
        text = to_yaml(replaced(tree, path, value))
        return rel, Hostile(text, kind, f'{value!r:.40}', show(path), definite)
    if kind == 'nonfinite':
        path = (*draw(st.sampled_from(_tuples(tree))), draw(st.sampled_from([0, 1, 2])))
        value = draw(NONFINITE)
        # -inf as a lower and +inf as an upper bound are no bound: maybe valid.
        definite = value != value or path[-1] == 0 or (path[-1] == 1) == (value > 0)
        text = to_yaml(replaced(tree, path, value))
        return rel, Hostile(text, kind, repr(value), show(path), definite)
    if kind == 'name':
        spoiled, where = spoiled_name(draw, tree)
        return rel, Hostile(to_yaml(spoiled), kind, 'bad characters', where, False)
    if kind == 'deep':
        path = draw(a_path(tree))
        text = to_yaml(replaced(tree, path, 'DEEPMARKER'))
        text = text.replace('DEEPMARKER', deep_text(draw, 'yaml'), 1)
        return rel, Hostile(text, kind, f'{DEEP} levels', show(path), True)
    lines = valid_text(rel).split('\n')
    leaves = [i for i, line in enumerate(lines) if _LEAF.match(line)]
    i = draw(st.sampled_from(leaves))
    indent, key, value = _LEAF.match(lines[i]).groups()
    where = f'line {i + 1} ({key})'
    if kind == 'raw':
        # Characters YAML refuses to read raw, and its own special floats.
        bad = draw(st.sampled_from(['\x01', '\x1b[31m', '\ud800', '.NaN', '.inf']))
        cut = draw(st.integers(0, len(value)))
        lines[i] = f'{indent}{key}: {value[:cut]}{bad}{value[cut:]}'
        return rel, Hostile('\n'.join(lines), kind, repr(bad), where, False)
    if kind == 'duplicate key':
        other = draw(st.sampled_from(['[1.0, -0.1, 0.1, s]', 'null', "'x'", '{}']))
        lines.insert(i + draw(st.integers(0, 1)), f'{indent}{key}: {other}')
        return rel, Hostile('\n'.join(lines), kind, repr(key), where, True)
    if draw(st.booleans()):
        # A small billion laughs (a test that is no check: stale at least).
        width, depth = draw(st.integers(1, 5)), draw(st.integers(1, 6))
        while width**depth > bomb_limit:
            depth -= 1
        lines += laughs(width, depth)
        text = '\n'.join(lines)
        return rel, Hostile(text, 'aliases', f'{width}**{depth}', 'the end', True)
    # An anchor on one value, an alias of it in place of another (before or
    # after it: an alias before its anchor is undefined).
    j = draw(st.sampled_from(leaves))
    lines[i] = f'{indent}{key}: &x {value}'
    if j != i:
        other_indent, other_key, _ = _LEAF.match(lines[j]).groups()
        lines[j] = f'{other_indent}{other_key}: *x'
    return rel, Hostile('\n'.join(lines), kind, 'an anchor and its alias', where, False)

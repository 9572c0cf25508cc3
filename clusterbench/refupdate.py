"""Deliberate reference updates: samples from run reports -> proposed references.

Per figure: the median of its samples, and a symmetric tolerance taken from the
measured variation, ``max(floor, k * 1.4826 * MAD / |median|)``. Only figures
of test cases that passed their sanity check count. Nothing is written unless
asked; writes are atomic and serialized, and every reference keeps the history
of the provenance of the ones it replaced.
"""

import contextlib
import datetime
import fcntl
import os
import statistics
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field

import yaml

from clusterbench import __version__, runreport
from clusterbench.errors import ClusterbenchError
from clusterbench.reflookup import index_value

PROVENANCE_DIR = 'provenance'


@dataclass
class Samples:
    test: str
    reference_file: str
    index: tuple
    key: tuple
    variable: str
    unit: str
    values: list = field(default_factory=list)
    sessions: set = field(default_factory=set)
    nodes: set = field(default_factory=set)
    facts: dict = field(default_factory=dict)
    identity: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Proposal:
    samples: Samples
    reference: float
    tolerance: float
    spread: float

    @property
    def entry(self):
        return [_round(self.reference), *band(self.tolerance), self.samples.unit]


def _round(value, digits=4):
    return float(f'{value:.{digits}g}')


def collect(report_paths):
    """Samples of every verified figure in the reports, grouped per reference."""
    groups = {}
    used = 0
    for path in report_paths:
        data = runreport.load(path)
        session = data['session_info'].get('uuid') or path
        for run in data['runs']:
            for case in run.get('testcases', []):
                if case.get('fixture') or not case.get('reference_file'):
                    continue
                if (
                    case.get('result') != 'pass'
                    and case.get('fail_phase') != 'performance'
                ):
                    continue
                if case.get('disturbed'):
                    # Its conditions broke the thresholds: not a measurement.
                    continue
                index = tuple(case.get('reference_index') or ())
                key = tuple(index_value(case, name) for name in index)
                if any(k is None for k in key):
                    continue
                for pkey, values in (case.get('perfvalues') or {}).items():
                    value, unit = values[0], values[4]
                    if value is None:
                        continue
                    var = pkey.rsplit(':', 1)[1]
                    ident = (_class_name(case), key, var)
                    group = groups.get(ident)
                    if group is None:
                        group = groups[ident] = Samples(
                            _class_name(case),
                            case['reference_file'],
                            index,
                            key,
                            var,
                            unit or '',
                        )
                    group.values.append(float(value))
                    group.sessions.add(session)
                    group.nodes.update(case.get('job_nodelist') or [])
                    group.facts = case.get('processor_facts') or {}
                    if case.get('node_facts'):
                        group.facts = {**group.facts, 'node_facts': case['node_facts']}
                    group.identity = identity_of(case) or group.identity
                    used += 1
    if not used:
        raise ClusterbenchError(
            'no verified figure in ' + ', '.join(report_paths) + ': nothing to update'
        )
    return list(groups.values())


def identity_of(case):
    """The machine identity recorded with a test case: taken around the job
    (``machine_identity``), else from the node facts; {} when none was."""
    ident = case.get('machine_identity')
    if not isinstance(ident, dict) or not ident:
        nodes = case.get('node_facts') or {}
        ident = next(
            (
                f['identity']
                for f in nodes.values()
                if isinstance(f, dict) and isinstance(f.get('identity'), dict)
            ),
            {},
        )
    return {'source': 'recorded', **ident} if ident else {}


def _class_name(case):
    # ReFrame keys external references by the test's class name, which leads
    # the display name ("CGSolverCheck %stencil=7 ...").
    return case['display_name'].split()[0]


def band(tolerance):
    """(lower, upper) of a symmetric relative tolerance. A spread wider than
    the value itself would allow a figure of the other sign: the band stops at
    zero on that side."""
    return max(-tolerance, -1.0), tolerance


def tolerance_of(values, floor=0.03, k=3.0):
    """(median, tolerance, relative spread) of one figure's samples:
    the tolerance is max(floor, k x the robust relative spread)."""
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    spread = 1.4826 * mad / abs(median) if median else 0.0
    return median, round(max(floor, k * spread), 2), spread


def propose(groups, floor=0.03, k=3.0, min_samples=1):
    proposals = []
    for group in groups:
        if len(group.values) < min_samples:
            continue
        median, tolerance, spread = tolerance_of(group.values, floor, k)
        proposals.append(Proposal(group, median, tolerance, spread))
    return proposals


def _nested_get(tree, keys):
    for key in keys:
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def _nested_set(tree, keys, value):
    for key in keys[:-1]:
        tree = tree.setdefault(key, {})
    tree[keys[-1]] = value


def _load_yaml(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        try:
            return yaml.safe_load(f) or {}
        except yaml.YAMLError as err:
            raise ClusterbenchError(f'{path}: YAML error: {err}') from None


def diff(proposals, directory):
    """Lines describing old -> new for every proposal."""
    cache = {}
    lines = []
    for prop in sorted(
        proposals, key=lambda p: (p.samples.test, p.samples.key, p.samples.variable)
    ):
        s = prop.samples
        path = os.path.join(directory, s.reference_file)
        refs = cache.setdefault(path, _load_yaml(path))
        old = _nested_get(refs, [s.test, *s.key, s.variable])
        where = ' > '.join([s.test, *map(str, s.key), s.variable])
        new = prop.entry
        new_text = (
            f'{new[0]:g} {s.unit} ±{prop.tolerance:.0%} '
            f'(n={len(s.values)}, spread {prop.spread:.1%})'
        )
        if old is None:
            lines.append(f'+ {where}: {new_text}')
        elif list(old) == new:
            lines.append(f'= {where}: {new_text}')
        else:
            old_text = f'{old[0]:g} {s.unit} {old[1]:+.0%}/{old[2]:+.0%}'
            lines.append(f'~ {where}: {old_text} -> {new_text}')
    return lines


class _NoAliasDumper(yaml.SafeDumper):
    """Repeated facts are written out again: a reader needs no anchors."""

    def ignore_aliases(self, data):
        return True


@contextlib.contextmanager
def _locked(directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, '.update.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _atomic_write(path, data, header=''):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix='.tmp-')
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(header)
            yaml.dump(
                data,
                f,
                Dumper=_NoAliasDumper,
                sort_keys=False,
                default_flow_style=None,
                width=100,
            )
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


HEADER = (
    '# ReFrame 4.10 external references (see README.md, "References").\n'
    '# Written by `clusterbench references update`; provenance of every entry\n'
    '# is in provenance/<this file>.\n'
)


def write(proposals, directory, reports, stack=None):
    """Apply *proposals* to the files in *directory*; return the files written."""
    by_file = defaultdict(list)
    for prop in proposals:
        by_file[prop.samples.reference_file].append(prop)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')
    written = []
    with _locked(directory):
        for name, props in sorted(by_file.items()):
            path = os.path.join(directory, name)
            prov_path = os.path.join(directory, PROVENANCE_DIR, name)
            os.makedirs(os.path.dirname(prov_path), exist_ok=True)
            refs = _load_yaml(path)
            prov = _load_yaml(prov_path)
            cases = defaultdict(list)
            for prop in props:
                s = prop.samples
                refs.setdefault(s.test, {})['$index'] = list(s.index)
                _nested_set(refs, [s.test, *s.key, s.variable], prop.entry)
                cases[(s.test, s.key)].append(prop)
            for (test, key), case_props in cases.items():
                where = '/'.join(map(str, key))
                entries = prov.setdefault(test, {})
                previous = entries.get(where)
                history = []
                if previous:
                    history = previous.pop('history', [])
                    history.insert(0, previous)
                first = case_props[0].samples
                entries[where] = {
                    'made': now,
                    'reports': [os.path.abspath(r) for r in reports],
                    'sessions': sorted(first.sessions),
                    'nodes': sorted(first.nodes),
                    'hardware': dict(first.facts),
                    'identity': dict(first.identity)
                    or {'source': 'absent', 'reason': 'the reports recorded none'},
                    'clusterbench': __version__,
                    'reframe': _reframe_version(),
                    'stack': dict(stack or {}),
                    'figures': {
                        p.samples.variable: {
                            'reference': p.entry,
                            'samples': len(p.samples.values),
                            'median': _round(statistics.median(p.samples.values), 6),
                            'spread_mad_rel': round(p.spread, 4),
                            'values': [_round(v, 6) for v in p.samples.values],
                        }
                        for p in case_props
                    },
                    'history': history,
                }
            _atomic_write(path, refs, HEADER)
            _atomic_write(prov_path, prov)
            written.append(path)
    return written


def _reframe_version():
    try:
        import reframe

        return reframe.VERSION
    except (ImportError, AttributeError):
        return None

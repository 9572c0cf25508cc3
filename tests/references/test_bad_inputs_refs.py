"""The bad-input matrix, round 3 (issue 29): what reaches the references.

NaN and infinite figures, samples, references and tolerances (classes 18,
19), duplicate keys (20), a half-applied reference update (23), an alias
bomb (27) and an empty reference file (31). Each case drives the program a
user runs (`clusterbench run`, `compare`, `report`, `replay`, `references
check|update`, plain `reframe`) on copies under tmp_path, and asserts the
exact one-line message, the exit code, and that no stored file changed
(tests/references/test_bad_inputs.py, whose helpers are in tests/badinput.py).
"""

import json
import os
import re
import shutil
import subprocess

import fsfaults
import pytest
from badinput import Store, assert_line, hashes, plain_reframe, references_check
from conftest import PROJECT, require_fixtures
from rfm import tool
from test_reference_file_errors import HPCC, HPL, TINY
from test_reftransaction import REFERENCES, run_report, update
from test_run_session import start

from clusterbench.parsers import hpcc
from clusterbench.references import store as refstore

pytestmark = pytest.mark.integration

FIXTURE = 'hpccoutf.N2000.1x2.txt'
HPL_WHERE = 'HPCCCheck > local:default > gnu-openmpi > hpl'


def clusterbench(*args, timeout=300):
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        capture_output=True, text=True, cwd=PROJECT, timeout=timeout,
    )  # fmt: skip


def run_session(store, *reframe_args, checks='reframe_checks/hpcc.py', timeout=600):
    """`clusterbench run` into *store*, ended if it outlives *timeout* (a
    hang guard, not a timing assertion); (exit code, output)."""
    proc = start(
        store.tmp, '--checks', checks, '--results', str(store.results),
        '--references', str(store.refs), '--', *reframe_args,
        env={'CLUSTERBENCH_MIRROR': '', 'CLUSTERBENCH_CACHE': str(store.tmp / 'c')},
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out + err


def with_hpl_line(tmp_path, line):
    """A Store whose local/hpcc.yaml is the test's file (tests/
    test_reference_file_errors.py) with its line 11 (the hpl entry) *line*."""
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    (refs / 'local' / 'hpcc.yaml').write_text(HPCC.replace(HPL, line))
    return Store(tmp_path, refs)


def fixture_text():
    with open(os.path.join(require_fixtures(), 'hpcc', FIXTURE)) as f:
        return f.read()


# --- 18. NaN reaches the references -----------------------------------------


@pytest.mark.parametrize(
    'line, reason',
    [
        ('MPIFFT_Gflops=nan', 'MPIFFT_Gflops is nan'),
        ('MPIFFT_Gflops=-inf', 'MPIFFT_Gflops is -inf'),
        # TFlop/s recorded in GFlop/s: 1e308 overflows.
        ('HPL_Tflops=1e308', 'HPL_Tflops is 1e+308'),
    ],
)
def test_18_a_nan_figure_of_a_real_hpcc_output_is_no_figure(line, reason):
    key = line.split('=')[0]
    text = re.sub(rf'^{key}=.*$', line, fixture_text(), flags=re.M)
    summary = hpcc.verify(text, 'hpccoutf.txt', nprocs=2, n=2000)
    with pytest.raises(hpcc.HPCCParseError) as err:
        hpcc.figures(summary, 'hpccoutf.txt')
    assert str(err.value) == f'hpccoutf.txt: {reason}: not a figure'


#: A stand-in for hpcc: rank 0 writes a real HPCC output (the process count
#: made the job's), one of its lines replaced.
FAKE_HPCC = """#!/bin/sh
[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] || exit 0
sed -e "s/^CommWorldProcs=.*/CommWorldProcs=$OMPI_COMM_WORLD_SIZE/" \\
    -e 's/^{key}=.*/{key}={value}/' '{fixture}' > hpccoutf.txt
"""


@pytest.mark.parametrize(
    'key, value, reason',
    [
        # A figure HPCC printed as nan: the parser names its own key.
        ('MPIFFT_Gflops', 'nan', 'hpccoutf.txt: MPIFFT_Gflops is nan: not a figure'),
        # A derived figure that overflows (HPL against a denormal DGEMM rate):
        # the verified-output path names the figure it would record.
        (
            'StarDGEMM_Gflops',
            '1e-320',
            'hpcc: hpl_dgemm_efficiency is inf: not a figure',
        ),
    ],
)
def test_18_a_nan_or_infinite_figure_fails_sanity_in_a_real_run(
    tmp_path, key, value, reason
):
    fake = tmp_path / 'hpcc'
    fixture = os.path.join(require_fixtures(), 'hpcc', FIXTURE)
    fake.write_text(FAKE_HPCC.format(key=key, value=value, fixture=fixture))
    fake.chmod(0o755)
    store = Store(tmp_path)
    rc, out = run_session(
        store, '-n', '^HPCCCheck$', '-p', 'gnu-openmpi', '-S', 'hpl_n=2000',
        '-S', f'HPCCCheck.executable={fake}',
    )  # fmt: skip
    assert rc == 1, out
    assert_line(
        out, f'HPCCCheck on local:default with gnu-openmpi: FAILED (sanity): {reason}'
    )
    store.assert_kept(new_session=True)
    (report,) = [p for p in store.results.glob('local/*/report.json')
                 if p.parent != store.earlier]  # fmt: skip
    (case,) = json.loads(report.read_text())['runs'][0]['testcases']
    assert all(v[0] is None for v in case['perfvalues'].values())


@pytest.mark.parametrize('value', ['NaN', 'Infinity', '1e999'])
def test_18_references_update_refuses_a_nan_or_infinite_sample(tmp_path, value):
    store = Store(tmp_path)
    report = run_report(tmp_path / 'r.json', files=('hpcc',))
    data = json.loads(open(report).read())
    (case,) = data['runs'][0]['testcases']
    (key,) = [k for k in case['perfvalues'] if k.endswith(':mpifft')]
    case['perfvalues'][key][0] = 12345.5
    text = json.dumps(data).replace('12345.5', value)
    with open(report, 'w') as f:
        f.write(text)
    result = update(store.refs, report)
    assert result.returncode == 2, result.stdout + result.stderr
    # The report reader refuses it before any sample is taken (samples.py
    # refuses it again, for a report read another way).
    shown = 'NaN' if value == 'NaN' else 'Infinity'
    assert_line(
        result.stderr,
        f'clusterbench: error: {report}: not a ReFrame run report: '
        f'runs[0].testcases[0].perfvalues[{key!r}][0]: {shown} is not a finite number',
    )
    store.assert_kept()


@pytest.mark.parametrize('value, shown', [('.nan', 'nan'), ('-.inf', '-inf')])
def test_18_references_check_refuses_a_nan_or_infinite_reference(
    tmp_path, value, shown
):
    store = with_hpl_line(tmp_path, HPL.replace('86.65', value))
    result = references_check(store.refs)
    assert result.returncode == 2, result.stdout
    assert_line(
        result.stderr,
        f'clusterbench: error: {store.file("hpcc")}:11: {HPL_WHERE}: reference '
        f'{shown} is not a finite number',
    )
    store.assert_kept()


# --- 19. a NaN tolerance ----------------------------------------------------

NAN_TOLERANCE = HPL.replace('-0.37, 0.37', '.nan, .nan')
NAN_LINE = f'{HPL_WHERE}: lower threshold nan must be a number <= 0 or null'


@pytest.mark.parametrize(
    'lower, upper, problem',
    [
        ('.nan', '.nan', 'lower threshold nan must be a number <= 0 or null'),
        ('-0.37', '.nan', 'upper threshold nan must be a number >= 0 or null'),
        ('-.inf', '0.37', 'lower threshold -inf must be a number <= 0 or null'),
        ('-0.37', '.inf', 'upper threshold inf must be a number >= 0 or null'),
    ],
)
def test_19_references_check_refuses_a_nan_or_infinite_threshold(
    tmp_path, lower, upper, problem
):
    store = with_hpl_line(tmp_path, HPL.replace('-0.37, 0.37', f'{lower}, {upper}'))
    result = references_check(store.refs)
    assert result.returncode == 2, result.stdout
    assert_line(
        result.stderr,
        f'clusterbench: error: {store.file("hpcc")}:11: {HPL_WHERE}: {problem}',
    )
    store.assert_kept()


def test_19_a_nan_tolerance_in_clusterbench_run(tmp_path):
    store = with_hpl_line(tmp_path, NAN_TOLERANCE)
    rc, out = run_session(store, *TINY)
    assert rc == 2, out
    assert_line(out, f'clusterbench: error: {store.file("hpcc")}:11: {NAN_LINE}')
    assert '$ ' not in out  # ReFrame never started
    store.assert_kept()


def test_19_a_nan_tolerance_in_plain_reframe(tmp_path):
    store = with_hpl_line(tmp_path, NAN_TOLERANCE)
    result = plain_reframe(store, *TINY)
    assert result.returncode == 1, result.stdout
    assert_line(
        result.stdout,
        f'* Reason: reference parse error: {store.file("hpcc")}:11: {NAN_LINE}',
    )
    store.assert_kept(new_session=True)


# --- 20. duplicate YAML keys -------------------------------------------------

DUPLICATE = HPL + HPL.replace('86.65', '99.0')
DUPLICATE_LINE = "{file}:12: duplicate key 'hpl' (also on line 11)"


def readers(store, report):
    """Each reader of a reference directory, as a user runs it:
    (exit code, output)."""
    return {
        'references check': lambda: _done(references_check(store.refs)),
        'run': lambda: run_session(store, *TINY),
        'compare': lambda: _done(
            clusterbench('compare', report, '--references', store.refs)
        ),
        'report': lambda: _done(
            clusterbench(
                'report',
                report,
                '--references',
                store.refs,
                '-o',
                store.tmp / 'out' / 'r.html',
            )  # fmt: skip
        ),
        'references update': lambda: _done(update(store.refs, report)),
    }


def _done(result):
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize(
    'reader', ['references check', 'run', 'compare', 'report', 'references update']
)
def test_20_a_duplicate_key_is_refused_by_every_reader(tmp_path, reader):
    store = with_hpl_line(tmp_path, DUPLICATE)
    report = run_report(tmp_path / 'r.json', files=('hpcc',))
    with open(report) as f:
        data = json.load(f)
    # The report's case names the test's own hpcc.yaml (its $index).
    (case,) = data['runs'][0]['testcases']
    case['reference_index'] = ['$partition', '$environ']
    with open(report, 'w') as f:
        json.dump(data, f)
    rc, out = readers(store, report)[reader]()
    assert rc == 2, out
    assert_line(
        out, 'clusterbench: error: ' + DUPLICATE_LINE.format(file=store.file('hpcc'))
    )
    store.assert_kept()


def test_20_a_duplicate_key_in_a_provenance_file(tmp_path):
    store = Store(tmp_path)
    prov = store.refs / 'local' / 'provenance' / 'hpcc.yaml'
    lines = prov.read_text().splitlines(keepends=True)
    # The first version's date, given again just below it.
    at = next(
        i for i, line in enumerate(lines) if line.lstrip(' -').startswith('made:')
    )
    field = lines[at].lstrip(' -')
    lines.insert(at + 1, ' ' * (len(lines[at]) - len(field)) + field)
    prov.write_text(''.join(lines))
    store.before = hashes(store.refs, store.results)
    result = references_check(store.refs)
    assert result.returncode == 2, result.stdout
    assert_line(
        result.stderr,
        f"clusterbench: error: {prov}:{at + 2}: duplicate key 'made' (also on line "
        f'{at + 1})',
    )
    store.assert_kept()


# --- 23. a half-applied reference update --------------------------------------


@pytest.fixture(scope='module')
def half_applied(tmp_path_factory):
    """A reference directory whose update was killed after its commit, once
    the new cgsolver.yaml was renamed into place and before hpcc.yaml was."""
    tmp = tmp_path_factory.mktemp('half')
    report = run_report(tmp / 'r.json')
    trace = tmp / 'trace'
    shutil.copytree(REFERENCES, tmp / 'traced')
    assert update(tmp / 'traced', report, hook=f'trace:{trace}').returncode == 0
    k = fsfaults.renamed_to(fsfaults.read_trace(trace), 'local/cgsolver.yaml')
    refs = tmp / 'refs'
    shutil.copytree(REFERENCES, refs)
    assert update(refs, report, hook=f'kill:{k}').returncode == -9
    assert (refs / 'local' / refstore.JOURNAL).exists()
    return refs


def session_of_hpcc(store):
    """A stored HPCC session `replay` verifies again (a real HPCC output)."""
    session = store.results / 'local' / '20260102T000000'
    (session / 'out').mkdir(parents=True)
    (session / 'out' / 'hpccoutf.txt').write_text(fixture_text())
    case = {
        'name': 'HPCCCheck', 'display_name': 'HPCCCheck', 'result': 'pass',
        'fixture': False, 'system': 'local', 'partition': 'default',
        'environ': 'gnu-openmpi', 'num_tasks': 2, 'outputdir': 'out',
        'hpl_problem': {'n': 2000}, 'reference_file': 'hpcc.yaml',
        'reference_index': ['$partition', '$environ'], 'perfvalues': {},
    }  # fmt: skip
    report = session / 'report.json'
    report.write_text(
        json.dumps({'session_info': {'uuid': 'h'}, 'runs': [{'testcases': [case]}]})
    )
    return session


@pytest.mark.parametrize(
    'reader',
    ['run', 'compare', 'report', 'replay', 'references update', 'plain reframe'],
)
def test_23_every_reader_refuses_a_half_applied_update(tmp_path, half_applied, reader):
    refs = tmp_path / 'refs'
    shutil.copytree(half_applied, refs)
    store = Store(tmp_path, refs)
    replayed = session_of_hpcc(store)
    store.before = hashes(store.refs, store.results)
    earlier = store.earlier / 'report.json'
    directory = refs / 'local'
    line = (
        f'{directory}: an interrupted reference update left some files new and '
        f'some old ({directory}/{refstore.JOURNAL}): run `clusterbench '
        f'references repair --references {refs}`'
    )
    if reader == 'plain reframe':
        result = plain_reframe(store, *TINY)
        assert result.returncode == 1, result.stdout
        assert_line(result.stdout, f'* Reason: reference parse error: {line}')
        store.assert_kept(new_session=True)
        return
    rc, out = {
        'run': lambda: run_session(store, *TINY),
        'compare': lambda: _done(
            clusterbench('compare', earlier, '--references', refs)
        ),
        'report': lambda: _done(
            clusterbench(
                'report',
                earlier,
                '--references',
                refs,
                '-o',
                tmp_path / 'out' / 'r.html',
            )  # fmt: skip
        ),
        'replay': lambda: _done(clusterbench('replay', replayed, '--references', refs)),
        # A dry run (`--write` repairs first: tests/references/test_reftransaction.py).
        'references update': lambda: _done(
            clusterbench(
                'references', 'update', '--from', earlier, '--references', refs
            )
        ),
    }[reader]()
    assert rc == 2, out
    assert_line(out, f'clusterbench: error: {line}')
    store.assert_kept()


def test_23_references_check_still_names_the_leftovers(tmp_path, half_applied):
    refs = tmp_path / 'refs'
    shutil.copytree(half_applied, refs)
    store = Store(tmp_path, refs)
    result = references_check(refs)
    assert result.returncode == 1, result.stdout + result.stderr
    assert_line(result.stdout, f'interrupted update: {refs}/local/{{ANY}}: {{REPAIR}}')
    store.assert_kept()


# --- 27. a YAML alias bomb ----------------------------------------------------

#: The billion laughs: 9 ** 9 strings from 859 bytes.
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + ''.join(
    f'{b}: &{b} [{",".join([f"*{a}"] * 9)}]\n' for a, b in zip('abcdefgh', 'bcdefghi')
)


@pytest.mark.parametrize('where', ['local/hpcc.yaml', 'local/provenance/hpcc.yaml'])
def test_27_an_alias_bomb_is_refused_by_references_check(tmp_path, where):
    store = Store(tmp_path)
    path = store.refs / where
    path.write_text(BOMB)
    store.before = hashes(store.refs, store.results)
    result = subprocess.run(
        [tool('clusterbench'), 'references', 'check', '--references', str(store.refs)],
        capture_output=True, text=True, cwd=PROJECT, timeout=60,  # a hang guard
    )  # fmt: skip
    assert result.returncode == 2, result.stdout
    assert_line(
        result.stderr,
        f'clusterbench: error: {path}:1: YAML anchor &a: not allowed in a '
        f'reference file',
    )
    store.assert_kept()


def test_27_an_alias_bomb_is_refused_by_clusterbench_run(tmp_path):
    store = Store(tmp_path)
    path = store.refs / 'local' / 'hpcc.yaml'
    path.write_text(BOMB)
    store.before = hashes(store.refs, store.results)
    rc, out = run_session(store, *TINY, timeout=60)  # a hang guard
    assert rc == 2, out
    assert_line(
        out,
        f'clusterbench: error: {path}:1: YAML anchor &a: not allowed in a '
        f'reference file',
    )
    store.assert_kept()


# --- 31. an empty reference file ----------------------------------------------


@pytest.mark.parametrize('content', ['', '# ReFrame 4.10 external references\n'])
@pytest.mark.parametrize('reader', ['references check', 'run'])
def test_31_an_empty_reference_file_is_named(tmp_path, reader, content):
    store = Store(tmp_path)
    path = store.refs / 'local' / 'hpcc.yaml'
    path.write_text(content)
    store.before = hashes(store.refs, store.results)
    if reader == 'run':
        rc, out = run_session(store, *TINY)
    else:
        rc, out = _done(references_check(store.refs))
    assert rc == 2, out
    assert_line(out, f'clusterbench: error: {path}: empty reference file')
    store.assert_kept()

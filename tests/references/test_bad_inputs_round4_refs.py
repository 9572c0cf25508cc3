"""The bad-input matrix, round 4 (issue 39): the reference store and baseline.

A journal that would overwrite any file (class 50), a unit the validator
refuses written by an update (51), a read-only reference directory (52), a
refused baseline that leaves a lock file (53), copies of one report counted
as sessions (54) and `references show` on a file of 60,000 figures (55).
Each case runs the real `clusterbench` on copies under tmp_path and asserts
the one line, the exit code, and that no file under tmp_path changed (the
victim outside the reference directory included).
"""

import hashlib
import json
import os
import shutil
import subprocess

import fsfaults
import pytest
from conftest import FIXTURES, PROJECT, fixtures_required, require_fixtures
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rfm import tool
from test_reftransaction import REFERENCES, run_report, update

from clusterbench.references import store as refstore

pytestmark = pytest.mark.integration

#: The stored session of the issue's reproductions.
SESSION = os.path.join(FIXTURES, 'sessions', 'AMD-25-1', 'report.json')
TXN = 'cafe0001'


def clusterbench(*args, timeout=300):
    """The real command, from the project root; *timeout* is a hang guard."""
    return subprocess.run(
        [tool('clusterbench'), *map(str, args)],
        capture_output=True, text=True, cwd=PROJECT, timeout=timeout,
        env={**os.environ, 'SOURCE_DATE_EPOCH': '1795000000'},
    )  # fmt: skip


def tree(root):
    """{relative path: sha256, or the target of a symbolic link} of every
    file, link and directory under *root*, lock files included."""
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                found[rel] = f'-> {os.readlink(path)}'
            elif os.path.isdir(path):
                found[rel] = 'dir'
            else:
                with open(path, 'rb') as f:
                    found[rel] = hashlib.sha256(f.read()).hexdigest()
    return found


def one_error(result, line):
    """Exit 2, *line* the only line on stderr, no traceback anywhere."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert 'Traceback' not in result.stdout + result.stderr
    assert result.stderr.splitlines() == [f'clusterbench: error: {line}']


# --- 50. a journal that names a file outside its directory --------------------

RECOVER = (
    '; nothing was changed: check the journal by hand, delete it, and run '
    '`clusterbench references repair --references {refs}` to remove the '
    'temporary files'
)


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def hostile(tmp_path, case):
    """The issue's reproduction, or one of its variants: (refs, the refusal
    after 'entry 1 ' that repair gives)."""
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    local = refs / 'local'
    victim = tmp_path / 'victim.txt'
    victim.write_text('original\n')
    temp = f'.hpcc.yaml.txn-{TXN}'
    (local / temp).write_text('payload\n')
    entry = {'path': '../../victim.txt', 'temp': temp, 'old': 'x', 'new': 'y'}
    why = (
        f"(path '../../victim.txt'): not a reference file of {local} "
        '(NAME.yaml or provenance/NAME.yaml)'
    )
    if case == 'absolute':
        entry['path'] = str(victim)
        why = f'(path {str(victim)!r}): not a reference file of {local} ' + (
            '(NAME.yaml or provenance/NAME.yaml)'
        )
    elif case == 'temp-outside':
        entry.update(path='hpcc.yaml', temp='../../victim.txt', new=sha('original\n'))
        why = (
            "(path 'hpcc.yaml'): temp '../../victim.txt' is not its temporary "
            f"file ('{temp}')"
        )
    elif case == 'symlinked-path':
        (local / 'evil.yaml').symlink_to(victim)
        (local / temp).rename(local / f'.evil.yaml.txn-{TXN}')
        entry.update(
            path='evil.yaml', temp=f'.evil.yaml.txn-{TXN}', new=sha('payload\n')
        )
        why = f"(path 'evil.yaml'): {local}/evil.yaml is a symbolic link"
    elif case == 'symlinked-temp':
        (local / temp).unlink()
        (local / temp).symlink_to(victim)
        entry.update(path='hpcc.yaml', new=sha('original\n'))
        why = f"(path 'hpcc.yaml'): {local}/{temp} is a symbolic link"
    elif case == 'symlinked-folder':
        # provenance/ a link out of the directory: its files are written there.
        outside = tmp_path / 'outside'
        (local / 'provenance').rename(outside)
        (local / 'provenance').symlink_to(outside)
        (local / temp).rename(outside / temp)
        entry.update(
            path='provenance/hpcc.yaml',
            temp=f'provenance/{temp}',
            new=sha('payload\n'),
        )
        why = f"(path 'provenance/hpcc.yaml'): {local}/provenance is a symbolic link"
    elif case == 'hash-mismatch':
        entry.update(path='hpcc.yaml', new=sha('what the update wrote\n'))
        found, named = sha('payload\n')[:12], sha('what the update wrote\n')[:12]
        why = (
            f"(path 'hpcc.yaml'): {local}/{temp} does not hold the version the "
            f'journal names (sha256 {found}..., journal {named}...)'
        )
    elif case == 'no-hash':
        entry = {'path': 'hpcc.yaml', 'temp': temp}
        why = (
            "(path 'hpcc.yaml'): no sha256 of its new version ('new'): not a "
            'journal this clusterbench writes'
        )
    journal = {'transaction': TXN, 'files': [entry]}
    (local / refstore.JOURNAL).write_text(json.dumps(journal))
    line = f'{local}/{refstore.JOURNAL}: refused: entry 1 {why}' + RECOVER.format(
        refs=refs
    )
    return refs, line


CASES = [
    'dotdot',
    'absolute',
    'temp-outside',
    'symlinked-path',
    'symlinked-temp',
    'symlinked-folder',
    'hash-mismatch',
    'no-hash',
]


@pytest.mark.parametrize('case', CASES)
def test_50_repair_refuses_a_journal_that_names_no_file_of_its_own(tmp_path, case):
    refs, line = hostile(tmp_path, case)
    before = tree(tmp_path)
    result = clusterbench('references', 'repair', '--references', refs)
    one_error(result, line)
    assert (tmp_path / 'victim.txt').read_text() == 'original\n'
    assert tree(tmp_path) == before


#: What the fuzzed journals' temporary files hold: a YAML mapping, as an
#: update writes.
PAYLOAD = 'Payload: {}\n'


def _journal_entries(victim):
    """Entries of a journal: the paths and temporary files an attacker or a
    torn write would give, the right hash or another, or none."""
    name = st.sampled_from(['hpcc.yaml', 'provenance/hpcc.yaml', 'evil.yaml'])
    path = st.one_of(
        name,
        st.sampled_from(
            [
                '../../victim.txt', str(victim), 'x/../../../victim.txt', '.',
                '', 'provenance', '../local/hpcc.yaml', 'hpcc.yaml/', '\x00',
            ]
        ),
        st.text(max_size=30),
        st.integers(),
        st.none(),
    )  # fmt: skip

    @st.composite
    def entries(draw):
        rel = draw(path)
        folder, base = os.path.split(rel) if isinstance(rel, str) else ('', '')
        temp = draw(
            st.one_of(
                st.just(os.path.join(folder, f'.{base}.txn-{TXN}')),
                st.sampled_from(['../../victim.txt', f'.hpcc.yaml.txn-{TXN}']),
                st.text(max_size=30),
                st.none(),
            )
        )
        new = draw(st.sampled_from([sha(PAYLOAD), sha('payload\n'), 'y', None, 5]))
        entry = {'path': rel, 'temp': temp, 'old': 'x'}
        if new is not None:
            entry['new'] = new
        return entry

    return st.lists(entries(), min_size=1, max_size=3)


@settings(
    max_examples=30,
    deadline=None,
    database=None,
    derandomize=fixtures_required(),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_50_no_journal_writes_outside_its_directory(tmp_path_factory, data):
    """Any journal: repair rolls forward (exit 0) only a journal whose every
    entry is a file of the directory whose new version is there; anything
    else is one line, exit 2, and nothing changed. The victim never is."""
    tmp_path = tmp_path_factory.mktemp('fuzz')
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    local = refs / 'local'
    victim = tmp_path / 'victim.txt'
    victim.write_text('original\n')
    for folder in ('', 'provenance/'):
        for base in ('hpcc.yaml', 'evil.yaml'):
            (local / f'{folder}.{base}.txn-{TXN}').write_text(PAYLOAD)
    files = data.draw(_journal_entries(victim))
    txid = data.draw(st.sampled_from([TXN, '../x', 5]))
    journal = {'transaction': txid, 'files': files}
    (local / refstore.JOURNAL).write_text(json.dumps(journal))
    before = tree(tmp_path)
    result = clusterbench('references', 'repair', '--references', refs)
    out = result.stdout + result.stderr
    assert 'Traceback' not in out and result.returncode in (0, 1, 2), out
    assert victim.read_text() == 'original\n'
    if result.returncode == 2:
        assert len(result.stderr.splitlines()) == 1, out
        assert tree(tmp_path) == before
        return
    # Rolled forward (1: the new files do not match their provenance): every
    # entry named a file of the directory, now its new version.
    assert txid == TXN, out
    for entry in files:
        assert refstore.STORED.match(entry['path']), out
        assert entry['new'] == sha(PAYLOAD), out
        assert (local / entry['path']).read_text() == PAYLOAD, out
    outside = {k: v for k, v in tree(tmp_path).items() if not k.startswith('refs/')}
    assert outside == {k: v for k, v in before.items() if not k.startswith('refs/')}


def _three_sessions(tmp_path):
    return [
        run_report(tmp_path / f'r{i}.json', files=('hpcc',), uuid=f's-{i}')
        for i in range(3)
    ]


@pytest.mark.parametrize('command', ['references update --write', 'baseline'])
def test_50_the_issues_journal_through_the_commands_that_roll_forward(
    tmp_path, command
):
    refs, line = hostile(tmp_path, 'dotdot')
    reports = _three_sessions(tmp_path)
    before = tree(tmp_path)
    if command == 'baseline':
        args = ['baseline', '--references', refs, '--sessions', '0', '--from']
        result = clusterbench(*args, *reports)
    else:
        result = clusterbench(
            'references', 'update', '--from', *reports, '--references', refs,
            '--write',
        )  # fmt: skip
    one_error(result, line)
    assert tree(tmp_path) == before


def test_50_every_reader_names_the_refusal_not_repair(tmp_path):
    """A reader (here `compare`) of a directory with a hostile journal says
    what repair would say, not "run repair"."""
    refs, line = hostile(tmp_path, 'dotdot')
    report = run_report(tmp_path / 'r.json', files=('hpcc',))
    before = tree(tmp_path)
    result = clusterbench('compare', report, '--references', refs)
    one_error(result, line)
    assert tree(tmp_path) == before


def test_50_a_legitimate_interrupted_update_is_still_repaired(tmp_path):
    """Killed right after its commit: readers say "run repair", and repair
    rolls it forward."""
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    report = run_report(tmp_path / 'r.json', files=('hpcc',))
    shutil.copytree(refs, tmp_path / 'traced')
    trace = tmp_path / 'trace'
    assert update(tmp_path / 'traced', report, hook=f'trace:{trace}').returncode == 0
    events = fsfaults.read_trace(trace)
    commit = fsfaults.commit_point(events, f'local/{refstore.JOURNAL}')
    assert update(refs, report, hook=f'kill:{commit}').returncode == -9
    local = refs / 'local'
    result = clusterbench('compare', report, '--references', refs)
    one_error(
        result,
        f'{local}: an interrupted reference update left some files new and some '
        f'old ({local}/{refstore.JOURNAL}): run `clusterbench references repair '
        f'--references {refs}`',
    )
    result = clusterbench('references', 'repair', '--references', refs)
    assert result.returncode == 0, result.stderr
    assert 'rolled forward the interrupted update' in result.stdout
    assert refstore.leftovers(str(local)) == []


# --- 51. a unit the validator refuses, from a report --------------------------


@pytest.mark.parametrize('unit', ['furlongs/s', '\x1b[8mGFlop/s'])
def test_51_update_write_refuses_a_unit_the_validator_refuses(tmp_path, unit):
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    report = tmp_path / 'r.json'
    run_report(report, files=('hpcc',))
    data = json.loads(report.read_text())
    (case,) = data['runs'][0]['testcases']
    (key,) = [k for k in case['perfvalues'] if k.endswith(':hpl')]
    case['perfvalues'][key][4] = unit
    report.write_text(json.dumps(data))
    before = tree(tmp_path)
    # One session: forced, so that the unit is what is refused.
    result = clusterbench(
        'references', 'update', '--from', report, '--references', refs, '--write',
        '--force',
    )  # fmt: skip
    one_error(
        result,
        f'{report}: HPCCCheck hpl_order=10368 / hpl: unknown unit {unit!r}; '
        'nothing was written',
    )
    assert tree(tmp_path) == before


# --- 52. a read-only reference directory --------------------------------------


@pytest.fixture
def read_only_refs(small_disk, tmp_path):
    """(refs on a tmpfs, remount it read-only and back): as
    tests/sessions/test_bad_inputs_runner.py::test_28_results_on_a_read_only_mount."""
    refs = small_disk / 'refs'
    shutil.copytree(REFERENCES, refs)

    def remount(mode):
        done = subprocess.run(
            ['mount', '-o', f'remount,{mode}', str(small_disk)],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            pytest.skip(f'cannot remount a tmpfs {mode}: {done.stderr.strip()}')

    yield refs, remount
    subprocess.run(['mount', '-o', 'remount,rw', str(small_disk)], check=True)


@pytest.mark.parametrize('command', ['baseline', 'references update', 'repair'])
def test_52_a_read_only_reference_directory(read_only_refs, tmp_path, command):
    refs, remount = read_only_refs
    reports = _three_sessions(tmp_path)
    if command == 'repair':
        # An update killed after its commit: repair has work to do.
        shutil.copytree(refs, tmp_path / 'traced')
        trace = tmp_path / 'trace'
        traced = update(tmp_path / 'traced', reports[0], hook=f'trace:{trace}')
        assert traced.returncode == 0
        events = fsfaults.read_trace(trace)
        commit = fsfaults.commit_point(events, f'local/{refstore.JOURNAL}')
        assert update(refs, reports[0], hook=f'kill:{commit}').returncode == -9
    remount('ro')
    before = tree(refs)
    if command == 'baseline':
        args = ['baseline', '--references', refs, '--sessions', '0', '--from']
        result = clusterbench(*args, *reports)
    elif command == 'repair':
        result = clusterbench('references', 'repair', '--references', refs)
    else:
        result = clusterbench(
            'references', 'update', '--from', *reports, '--references', refs,
            '--write',
        )  # fmt: skip
    remount('rw')
    one_error(result, f'{refs}/local: not writable (read-only file system)')
    assert tree(refs) == before


# --- 53. a refused baseline leaves no lock ------------------------------------


def test_53_a_refused_baseline_leaves_no_lock_file(tmp_path):
    require_fixtures()
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    before = tree(tmp_path)
    result = clusterbench(
        'baseline', '--references', refs, '--sessions', '0', '--from', SESSION
    )
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith('clusterbench: error: baseline: ') and '--force' in line
    assert not list(refs.rglob(refstore.LOCK))
    assert tree(tmp_path) == before


# --- 54. copies of one report are one session ---------------------------------


def test_54_copies_of_a_report_without_uuid_are_one_session(tmp_path):
    require_fixtures()
    refs = tmp_path / 'refs'
    shutil.copytree(REFERENCES, refs)
    with open(SESSION) as f:
        data = json.load(f)
    del data['session_info']['uuid']
    copies = []
    for name in 'abc':
        (tmp_path / name).mkdir()
        copies.append(tmp_path / name / 'report.json')
        copies[-1].write_text(json.dumps(data))
    before = tree(tmp_path)
    args = ['baseline', '--references', refs, '--sessions', '0', '--from']
    result = clusterbench(*args, *copies)
    assert result.returncode == 2, result.stdout + result.stderr
    for copy in copies[1:]:
        assert (
            f'{copy}: the same test cases as {copies[0]} (no session uuid): '
            'counted once'
        ) in result.stdout.splitlines()
    (line,) = result.stderr.splitlines()
    assert line.startswith('clusterbench: error: baseline: ')
    assert '; 1 in all); 3 are needed' in line and '--force' in line
    assert tree(tmp_path) == before


# --- 55. references show on a file of 60,000 figures --------------------------


def big_reference_file(path, kinds):
    """A reference file of *kinds* CPU kinds, one figure each (80 bytes a
    figure: the issue's 3.3 MB file held 40,000)."""
    lines = [
        'CGSolverCheck:',
        '  $index: [$partition, $environ, cpu_kind, stencil]',
        '  local:default:',
        '    gnu-openmpi:',
    ]
    for k in range(kinds):
        lines += [f'      AMD-25-{k}:', '        7:']
        lines.append(f'          gflops: [{4 + k / kinds:.5f}, -0.19, 0.19, GFlop/s]')
    path.write_text('\n'.join(lines) + '\n')


def test_55_references_show_on_a_file_of_60000_figures(tmp_path):
    refs = tmp_path / 'refs'
    (refs / 'local').mkdir(parents=True)
    kinds = 60_000
    big_reference_file(refs / 'local' / 'cgsolver.yaml', kinds)
    before = tree(tmp_path)
    # A hang guard, not a timing assertion: the summary scanned every row
    # once per CPU kind, which took 2 minutes for 40,000 figures here and
    # more than 3 for these; a row at a time it takes 20 s.
    result = clusterbench('references', 'show', '--references', refs, timeout=180)
    assert result.returncode == 0, result.stderr
    kind_lines = [x for x in result.stdout.splitlines() if x.startswith('CPU AMD-25-')]
    assert len(kind_lines) == kinds
    assert kind_lines[-1].startswith(
        'CPU AMD-25-9999: 1 reference figure(s), 1 with a band wider than ±10 %'
    )
    assert tree(tmp_path) == before

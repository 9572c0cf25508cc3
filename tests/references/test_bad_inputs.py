"""The bad-input matrix (issue 20, item 5): one case a class of bad input.

Each case drives a real program as a user would (`clusterbench run`, plain
`reframe`, `clusterbench references update --write`, `clusterbench report`)
on copies under tmp_path, and asserts three things: the exact one-line
message, the exit code, and that no stored file changed (the sha256 of every
file under the reference directory and the results root, before and after).
docs/bad-input.md ("Bad input: what you see, what is kept") is this matrix as a
table; tests/badinput.py holds its pieces.
"""

import json
import os
import random
import shutil
import signal
import subprocess
import time

import fsfaults
import pytest
import yaml
from badinput import (
    Store,
    assert_line,
    failed,
    fake_tree,
    hashes,
    npb,
    plain_reframe,
    programs_under,
    references_check,
)
from conftest import PROJECT
from rfm import tool
from test_acceptance_cluster import (  # noqa: F401 (fixtures)
    clean,
    lose_node_while,
    slurm_output,
)
from test_npb_check import FAKE_TREE
from test_reference_file_errors import TINY, broken_copy
from test_reftransaction import (
    LOADER,
    contents,
    run_report,
    update,
)
from test_run_session import ONE_CG, start, stopped_session

from clusterbench.references import store as refstore
from clusterbench.testcluster import procs, testing

pytestmark = pytest.mark.integration


# --- 1. a malformed reference file -----------------------------------------

#: What line 11 of the test's hpcc.yaml (tests/references/test_reference_file_errors.py)
#: is, broken each way BROKEN breaks it.
MALFORMED = {
    'bracket': "YAML error: while parsing a flow sequence: expected ',' or ']', "
    "but got ':' (line 12)",
    'type': "HPCCCheck > local:default > gnu-openmpi > hpl: reference 'fast' is "
    'not a number',
    'threshold': 'HPCCCheck > local:default > gnu-openmpi > hpl: lower threshold '
    '0.5 must be a number <= 0 or null',
}


@pytest.mark.parametrize('what', sorted(MALFORMED))
def test_01_malformed_reference_file_in_clusterbench_run(tmp_path, what):
    store = Store(tmp_path, broken_copy(tmp_path, what))
    rc, out = store.run(*TINY, checks='reframe_checks/hpcc.py')
    assert rc == 2, out
    assert_line(out, f'clusterbench: error: {store.file("hpcc")}:11: {MALFORMED[what]}')
    store.assert_kept()


def test_01_malformed_reference_file_in_plain_reframe(tmp_path):
    store = Store(tmp_path, broken_copy(tmp_path, 'bracket'))
    result = plain_reframe(store, *TINY)
    assert result.returncode == 1, result.stdout
    assert_line(
        result.stdout,
        f'* Reason: reference parse error: {store.file("hpcc")}:11: '
        f'{MALFORMED["bracket"]}',
    )
    store.assert_kept(new_session=True)


def test_01_unknown_check_in_a_reference_file(tmp_path):
    store = Store(tmp_path)
    path = store.file('hpcc')
    with open(path) as f:
        line = len(f.readlines()) + 1
    with open(path, 'a') as f:
        f.write('NoSuchCheck:\n  local:default:\n    time: [1.0, -0.1, 0.1, s]\n')
    store.before = hashes(store.refs, store.results)
    result = references_check(store.refs)
    assert result.returncode == 1, result.stdout + result.stderr
    assert_line(
        result.stdout,
        f'stale: {path}:{line}: NoSuchCheck: no such check in reframe_checks/',
    )
    store.assert_kept()


# --- 2. an unknown system, partition or environment -------------------------


@pytest.mark.parametrize(
    'options, reframe_args, line',
    [
        (
            ('--system', 'nosuch'),
            (),
            'clusterbench: error: site_configs/nosuch.py: no such site config (run '
            'from the project root or pass its path)',
        ),
        (
            ('--system', 'local:nosuch'),
            (),
            'clusterbench: error: --system local:nosuch: local has no partition '
            'nosuch in site_configs/local.py (it has default)',
        ),
        (
            (),
            ('-p', 'nosuch'),
            'clusterbench: error: -p nosuch: no programming environment of local '
            'matches (it has gnu-mpich, gnu-openmpi); ReFrame ran no test',
        ),
    ],
    ids=['system', 'partition', 'environment'],
)
def test_02_unknown_system_partition_or_environment(
    tmp_path, options, reframe_args, line
):
    store = Store(tmp_path)
    rc, out = store.run(
        *reframe_args, options=options, checks='reframe_checks/cgsolver.py'
    )
    assert rc == 2, out
    assert_line(out, line)
    store.assert_kept(new_session=bool(reframe_args))
    if not reframe_args:  # refused before ReFrame ran: no session directory
        assert sorted(store.results.rglob('*')) == sorted(store.earlier_tree)
    else:  # ReFrame ran and selected nothing: its log, no report
        assert list(store.results.glob('local/*/report.json')) == [
            store.earlier / 'report.json'
        ]


# --- 3.-8. through the NPB check and its fake tree ---------------------------


@pytest.mark.parametrize(
    'settings, bench, tree, env, phase, reason',
    [
        (
            ('-S', 'npb_class=Z'), 'cg', None, {}, 'setup',
            "NPBProvided %benchmark=cg failed: npb_class=Z: unknown NPB class 'Z' "
            '(one of S W A B C D E F)',
        ),
        (
            ('-S', 'npb_ranks=3'), 'bt', None, {}, 'setup',
            'npb_ranks=3: BT needs a square number of processes (1, 4, 9, 16, ...), '
            'not 3',
        ),
        (
            (), 'cg', '/nonexistent', {}, 'setup',
            'NPBProvided %benchmark=cg failed: /nonexistent: NPB source tree not found',
        ),
        (
            ('-S', 'npb_prefix=/nonexistent'), 'cg', '', {}, 'setup',
            'NPBProvided %benchmark=cg failed: npb_prefix=/nonexistent: no such '
            'directory',
        ),
        (
            (), 'cg', '#error broken on purpose', {}, 'compile_wait',
            'NPBProvided %benchmark=cg failed: build error: build job failed with '
            'exit code: 2',
        ),
        (
            (), 'cg', 'raise(SIGSEGV);', {}, 'sanity',
            'NPB exited with code 139 (see rfm_job.err)',
        ),
        (
            ('-S', 'time_limit=5s'), 'cg', 'sleep(60);', {}, 'run',
            'job error: [jobid={NUM}] job timed out ({NUM}s > 5.0s)',
        ),
        (
            (), 'cg', None, {'FAKE_NPB_VERIFY': 'UNSUCCESSFUL'}, 'sanity',
            'rfm_job.out: NPB verification UNSUCCESSFUL',
        ),
    ],
    ids=[
        '03-npb-class', '03-rank-count', '04-source-tree', '04-binary',
        '05-build-failure', '06-sigsegv', '07-hang', '08-verification',
    ],
)  # fmt: skip
def test_03_to_08_a_test_that_cannot_measure_fails_naming_why(
    tmp_path, settings, bench, tree, env, phase, reason
):
    store = Store(tmp_path)
    if tree is None:
        tree = FAKE_TREE
    elif not tree.startswith('/'):
        tree = fake_tree(tmp_path, tree) if tree else ''
    try:
        rc, out = store.run(*npb(*settings, bench=bench, tree=tree), env=env)
    finally:
        # The ranks of a job ended at its time limit outlive it (mpirun is
        # killed, they are not): end them here.
        for pid in programs_under(tmp_path):
            os.kill(pid, signal.SIGKILL)
    assert rc == 1, out
    assert_line(out, failed(phase, reason))
    store.assert_kept(new_session=True)
    (session,) = [
        p for p in (store.results / 'local').iterdir() if p.name != '20260101T000000'
    ]
    with open(session / 'report.json') as f:
        report = json.load(f)
    # No figure recorded by a test that failed.
    for case in report['runs'][0]['testcases']:
        if case['result'] != 'pass':
            assert not [
                v for v in (case['perfvalues'] or {}).values() if v[0] is not None
            ]


# --- 9. a node lost mid-run (the Slurm test cluster box) --------------------


@pytest.fixture
def box():
    """The cluster for the one test here that needs it, and for no other: the
    cluster is one per machine, and other workers' files wait for it."""
    with testing.cluster_up(2) as state:
        yield state


def program_on(state, node, name):
    """Whether a process called *name* runs on *node* of the test cluster."""
    for pid in procs.netns_pids(state.node(node)['netns']):
        try:
            with open(f'/proc/{pid}/comm') as f:
                if f.read().strip() == name:
                    return True
        except OSError:
            continue
    return False


@pytest.mark.skipif(
    testing.unavailable() is not None, reason=str(testing.unavailable())
)
def test_09_a_node_lost_mid_run(clean, tmp_path):  # noqa: F811
    store = Store(tmp_path)
    proc = start(
        tmp_path, '--system', 'box', '--config', testing.BOX_CONFIG,
        '--checks', 'reframe_checks/fabric.py', '--results', str(store.results),
        '--references', str(store.refs), '--',
        '-n', '^FabricCheck$', '-p', '^gnu-openmpi$',
        env={**clean.env(), **testing.POLL_ENV},
    )  # fmt: skip
    # The MPI program runs on both nodes: its processes are in both nodes'
    # namespaces. (A step merely created in squeue may still be launching:
    # srun then reports the failed launch: tests/site/test_jobstate.py.)
    out, err = lose_node_while(
        clean,
        proc,
        lambda: all(program_on(clean, node, 'fabric') for node in ('n1', 'n2')),
        'fabric running on n1 and n2',
        timeout=300,
        poll=0.05,
    )
    assert proc.returncode == 1, out + err
    # Slurm marks the job NODE_FAIL, unless srun gives up on n2 first.
    said = 'FabricCheck on box:compute with gnu-openmpi: FAILED (sanity): job {NUM} '
    if 'srun lost n2' in out + err:
        assert_line(out + err, said + 'ended {ANY} on n1,n2: srun lost n2: a node '
                    'of the job was lost')  # fmt: skip
    else:
        assert_line(
            out + err, said + 'ended NODE_FAIL on n1,n2: a node of the job was lost'
        )
    store.assert_kept(new_session=True)


# --- 11. kill -9 during references update --write ---------------------------


def test_11_kill_9_at_8_random_points_of_references_update_write(tmp_path):
    # Random points beside tests/references/test_reftransaction.py's one of each kind.
    store = Store(tmp_path)
    report = run_report(tmp_path / 'report.json')
    old = contents(store.refs)
    done = tmp_path / 'done'
    shutil.copytree(store.refs, done)
    trace = tmp_path / 'trace'
    assert update(done, report, hook=f'trace:{trace}').returncode == 0
    new = contents(done)
    # Points inside the transaction: before one of its file operations.
    first, last = fsfaults.transaction(fsfaults.read_trace(trace))
    seed = random.randrange(2**32)
    print(f'kill points seeded with {seed}')
    points = sorted(random.Random(seed).sample(range(first, last + 1), 8))
    for k in points:
        work = tmp_path / f'k{k}'
        shutil.copytree(store.refs, work)
        killed = update(work, report, hook=f'kill:{k}')
        assert killed.returncode == -signal.SIGKILL, (seed, k, killed.stderr)
        after = contents(work)
        for rel, (data, mode) in old.items():
            assert after[rel] in ((data, mode), new[rel]), (seed, k, rel)
            if rel.endswith('.yaml'):
                yaml.load(after[rel][0], Loader=LOADER)
        check = references_check(work)
        assert check.returncode == 1, (seed, k, check.stdout)
        assert_line(check.stdout, f'interrupted update: {work}/{{ANY}}: {{REPAIR}}')
        shutil.rmtree(work)
    store.assert_kept()


# --- 12. two concurrent references update --write ---------------------------


def test_12_two_concurrent_references_updates_take_turns(tmp_path):
    store = Store(tmp_path)
    first_report = run_report(tmp_path / 'a.json', files=('hpcc',), uuid='s-a')
    second_report = run_report(
        tmp_path / 'b.json', files=('hpcc',), factor=1.02, uuid='s-b'
    )
    # What the two give one after the other.
    serial = tmp_path / 'serial'
    shutil.copytree(store.refs, serial)
    for report in (first_report, second_report):
        assert update(serial, report).returncode == 0
    # The first pauses at its first write: it holds the lock there.
    traced = tmp_path / 'traced'
    shutil.copytree(store.refs, traced)
    trace = tmp_path / 'first-trace'
    assert update(traced, first_report, hook=f'trace:{trace}').returncode == 0
    at, _ = fsfaults.transaction(fsfaults.read_trace(trace))
    hold = tmp_path / 'hold'
    hold.mkdir()
    procs = []
    try:
        first = update(store.refs, first_report, hook=f'pause:{at}:{hold}', wait=False)
        procs.append(first)
        deadline = time.monotonic() + 60
        while not (hold / 'paused').exists():
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        trace = tmp_path / 'second-trace'
        second = update(store.refs, second_report, hook=f'trace:{trace}', wait=False)
        procs.append(second)
        # The first holds the lock half way through its writes: the second opens
        # the lock file (in the directory it makes if need be), and does nothing more.
        lock = (f'local/{refstore.LOCK}',)
        while lock not in fsfaults.paths(trace):
            assert second.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(1.0)
        assert second.poll() is None
        assert fsfaults.paths(trace) == {('local',), lock}
        (hold / 'go').touch()
        outputs = [proc.communicate(timeout=60) for proc in (first, second)]
    finally:
        # A failed assertion leaves no update paused or waiting behind it.
        (hold / 'go').touch()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert [proc.returncode for proc in (first, second)] == [0, 0], outputs
    assert_line(
        outputs[1][1],
        f'clusterbench: waiting for another update of {store.refs}/local '
        f'(lock {store.refs}/local/{refstore.LOCK})',
    )
    # Both updates, in turn: nothing of either lost.
    assert contents(store.refs) == contents(serial)
    store.refs = tmp_path / 'none'  # the references changed, as asked
    store.refs.mkdir()
    store.before = {k: v for k, v in store.before.items() if '/refs/' not in k}
    store.assert_kept()


# --- 13. two concurrent clusterbench run sessions ---------------------------


def test_13_a_second_run_session_on_the_node_is_refused_with_no_wait(tmp_path):
    store = Store(tmp_path)
    first_dir = tmp_path / 'first'
    with stopped_session(
        tmp_path, first_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ) as (first, lock_file):
        rc, out = store.run(*ONE_CG, options=('--no-wait',), checks='reframe_checks')
    first.terminate()
    first.wait(timeout=120)
    assert rc == 2, out
    assert_line(
        out,
        f'clusterbench: error: {os.uname().nodename} is measuring for another '
        f'session (pid {first.pid}, session {first_dir}/local/{{STAMP}}; lock '
        f'{lock_file}): '
        'run again when it ends, or without --no-wait to wait for it',
    )
    store.assert_kept()


# --- 14. HTML injection into the report -------------------------------------


def test_14_html_in_a_report_is_escaped(tmp_path):
    store = Store(tmp_path)
    evil = '<script>alert(1)</script>'
    session = store.results / 'local' / '20260102T000000'
    session.mkdir()
    path = run_report(session / 'report.json', files=('netpipe',), uuid=evil)
    with open(path) as f:
        report = json.load(f)
    for case in report['runs'][0]['testcases']:
        case['display_name'] = case['name'] = f'{case["name"]} {evil}'
    with open(path, 'w') as f:
        json.dump(report, f)
    store.before = hashes(store.refs, store.results)
    html = tmp_path / 'report.html'
    result = subprocess.run(
        [tool('clusterbench'), 'report', str(session), '-o', str(html),
         '--references', str(store.refs)],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert_line(
        result.stdout,
        f'wrote {html} (1 configuration(s), 3 figure(s), 1 plot(s)) and the CSVs in '
        f'{tmp_path}/report-data/ in {{NUM}} s',
    )
    text = html.read_text()
    assert evil not in text and '&lt;script&gt;alert(1)&lt;/script&gt;' in text
    store.assert_kept()


# --- 15. shell metacharacters in -S values and system names -----------------


@pytest.mark.parametrize(
    'options, reframe_args, rc, line',
    [
        (
            ('--system', 'x;touch X'), (), 2,
            "clusterbench: error: --system 'x;touch X': not a system name (name or "
            'name:partition; letters, digits, _ and - only)',
        ),
        (
            (), npb('-S', 'npb_class=;touch X'), 1,
            failed(
                'setup',
                "NPBProvided %benchmark=cg failed: npb_class=;touch X: unknown NPB "
                "class ';touch X' (one of S W A B C D E F)",
            ),
        ),
    ],
    ids=['system-name', 'S-value'],
)  # fmt: skip
def test_15_shell_syntax_is_never_run(tmp_path, options, reframe_args, rc, line):
    store = Store(tmp_path)
    code, out = store.run(*reframe_args, options=options)
    assert code == rc, out
    assert_line(out, line)
    assert not os.path.exists(os.path.join(PROJECT, 'X'))
    assert not [p for p in tmp_path.rglob('X')]
    store.assert_kept(new_session=True)

"""On a real Slurm cluster: the all-pairs schedule of our fabric program on 4
nodes, then on 2 nodes the multi-node suite, and acceptance that names every
injected fault (that it passes the undisturbed cluster is in
test_quiet_run.py: the other test files' load is a disturbance).

One 2-node cluster for the module (brought up once, always torn down, checked
to leave nothing); each fault is injected, proven named, and cleared again.
"""

import os
import shutil
import subprocess
import sys
import time

import pytest
import test_fabric_program as fabric_program
from conftest import PROJECT

from clusterbench.acceptance import links, nodes, outputs, runcases, scaling
from clusterbench.testcluster import cluster, faults, testing

REASON = testing.unavailable()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(REASON is not None, reason=REASON or ''),
]
ENVIRONS = {'gnu-openmpi', 'gnu-mpich'}
#: Debian's MPICH 4.0.2 (ch4:ucx) can hang in MPI_Finalize over UCX's TCP
#: transport (a rank waits in a PMI barrier while its peer's UCX flush needs
#: it to progress; MPICH 4.2 removed that barrier, pmodels/mpich#6596): a few
#: percent of multi-node runs. A hung job ends at its time limit and is rerun.
MPICH_RETRIES = ('--max-retries', '2', '-S', 'time_limit=3m')


@pytest.fixture(scope='module')
def box():
    with testing.cluster_up(2) as state:
        yield state


@pytest.fixture
def clean(box):
    """Each test starts and ends with no fault on the cluster."""
    yield box
    faults.clear(box)
    assert box.get('faults') == {}
    # A job the test's session ended may still be completing (Slurm's teardown
    # of its processes, slower after a lossy link): let it finish, bounded.
    deadline = time.monotonic() + 60
    states = cluster.node_states(box)
    while 'completing' in states.values() and time.monotonic() < deadline:
        time.sleep(1)
        states = cluster.node_states(box)
    assert states == {'n1': 'idle', 'n2': 'idle'}


def slurm_output(box, *command):
    """Standard output of a Slurm client command on the box."""
    return subprocess.run(
        command, capture_output=True, text=True, env=box.env(), timeout=30, check=False
    ).stdout


def slurm_nodes(box, jobid):
    """The nodes Slurm's accounting gives a job (ReFrame's own node list is
    taken from a poll and can be short for jobs that end within a second).

    Read once the job has ended and its record holds as many nodes as it was
    allocated: a record read while slurmdbd is still taking the job's start
    and end messages can be incomplete.
    """
    deadline = time.monotonic() + 60
    running = ('PENDING', 'RUNNING', 'COMPLETING')
    while True:
        acct = slurm_output(
            box,
            'sacct',
            '-X',
            '-n',
            '-P',
            '-j',
            str(jobid),
            '-o',
            'State,NNodes,NodeList',
        ).strip()
        fields = acct.splitlines()[-1].split('|') if acct else []
        names = []
        if len(fields) == 3 and fields[2] != 'None assigned':
            names = slurm_output(
                box, 'scontrol', 'show', 'hostnames', fields[2]
            ).split()
        ended = fields and fields[0].split()[0] not in running
        if ended and fields[1] == str(len(names)) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert names, f'job {jobid}: sacct gave {acct!r}'
    return sorted(names)


def battery(box, prefix, *extra):
    """The acceptance battery (nodes with --distribute, then the fabric)."""
    proc = testing.acceptance(
        'battery',
        '--config',
        testing.BOX_CONFIG,
        '--prefix',
        str(prefix),
        '--nodes',
        'n1,n2',
        *extra,
        state=box,
        db=os.path.join(prefix, 'results.db'),
    )
    return proc


def lose_node_while(box, proc, running, what, node='n2', timeout=120, poll=0.2):
    """Once *running*() is true, kill *node* (the fault 'lost'); the output of
    *proc* once it has ended (killed if it does not end in time)."""
    deadline = time.monotonic() + timeout
    try:
        while not running():
            if time.monotonic() > deadline:
                pytest.fail(f'timed out waiting for {what}')
            time.sleep(poll)
        faults.inject(box, 'lost', node)
        return proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def node_table(prefix):
    cases = runcases.load([os.path.join(prefix, 'nodes', 'report.json')])
    spec = runcases.acceptance_spec(cases)
    ranked = nodes.rank(
        nodes.collect(cases), min_spread=spec['min_spread'], expected=['n1', 'n2']
    )
    return {n.name: n for n in ranked}, nodes.table(ranked)


def fabric(box, prefix, environs=('gnu-openmpi',)):
    rc, out, report = testing.reframe(
        prefix,
        '-n',
        '^FabricCheck$',
        *[a for e in environs for a in ('-p', f'^{e}$')],
        *MPICH_RETRIES,
        checks=['reframe_checks/fabric.py'],
        state=box,
        timeout=600,
    )
    assert report is not None, out
    cases = [c for c in runcases.load([os.path.join(prefix, 'report.json')])]
    verdicts = []
    for test, environ, result, spec in links.fabric_results(cases):
        verdict = links.judge(result, spec)
        verdict.test, verdict.environ = test, environ
        verdicts.append(verdict)
    assert {v.environ for v in verdicts} == set(environs), out
    return rc, verdicts


# First in this file: it brings up a 4-node cluster of its own before the
# module's 2-node one, on the same worker (a cluster is one per machine).
def test_four_nodes_all_pairs_in_three_rounds_and_the_capped_node_named(tmp_path):
    """N=4: 3 rounds of 2 pairs, each pair once; a capped node is named by the
    population of links alone (no specification), its links flagged."""
    if not shutil.which('mpicc.openmpi'):
        pytest.skip('Open MPI not installed')
    fabric, _ = fabric_program.build('mpicc.openmpi', str(tmp_path / 'build'))
    with testing.cluster_up(4) as state:
        env = {
            **state.env(),
            **fabric_program.ROOT_ENV,
            'SLURM_MPI_TYPE': 'pmix',
            'OMPI_MCA_pml': 'ob1',
            'OMPI_MCA_btl': 'tcp,self',
            'OMPI_MCA_btl_tcp_if_include': 'eth0',
            # Four nodes share two cores here: ranks waiting must yield.
            'OMPI_MCA_mpi_yield_when_idle': '1',
        }

        def run():
            proc = subprocess.run(
                ['srun', '-N4', '-n4', fabric, '--lat-iters', '200', '--max-time', '1'],
                capture_output=True,
                text=True,
                timeout=180,
                env=env,
                check=False,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            return outputs.fabric(proc.stdout, nodes=4, ranks=4)

        result = run()
        assert sorted(result['nodes']) == ['n1', 'n2', 'n3', 'n4']
        assert result['rounds'] == 3 and result['pairs'] == 6
        assert [len(r) for r in result['schedule']] == [2, 2, 2]
        assert len(result['round_s']) == 3

        faults.inject(state, 'link', 'n3', rate='100mbit')
        capped = run()
        verdict = links.judge(capped, {}, z_max=3.5, min_spread=0.15)
        assert set(verdict.culprits) == {'n3'}, links.table(verdict)
        assert 'bandwidth' in verdict.culprits['n3']
        for link in verdict.links:
            touches = 'n3' in (link.a, link.b)
            assert ('bandwidth' in link.flags) == touches, links.table(verdict)


def test_the_multinode_suite_runs_across_nodes_with_both_mpis(box, tmp_path):
    rc, out, report = testing.reframe(
        tmp_path,
        '-t',
        '^multinode$',
        '-S',
        'HPCCScalingCheck.hpl_n=1000',
        *MPICH_RETRIES,
        checks=['reframe_checks/acceptance.py', 'reframe_checks/fabric.py'],
        state=box,
        timeout=1500,
    )
    assert report is not None, out
    cases = runcases.load([os.path.join(tmp_path, 'report.json')])
    ran = [c for c in cases if c['result'] != 'skip']
    failed = [
        (c['display_name'], c['fail_reason']) for c in ran if c['result'] != 'pass'
    ]
    assert not failed, failed
    assert rc == 0, out[-3000:]

    # The CG solver, strong and weak, on 1 and 2 nodes, with both MPIs.
    cg = {
        (c['environ'], c['mode'], c['node_count']): c
        for c in ran
        if c['name'].startswith('CGScalingCheck')
    }
    assert set(cg) == {
        (e, m, n) for e in ENVIRONS for m in ('strong', 'weak') for n in (1, 2)
    }
    for (_, _, count), c in cg.items():
        assert c['num_tasks'] == count  # one core per node, every core
        assert len(slurm_nodes(box, c['jobid'])) == count
    # HPCC on 2 nodes (1 node of 1 core cannot hold its 2 ranks: skipped).
    hpcc = {c['node_count']: c for c in cases if c['name'].startswith('HPCCScaling')}
    assert hpcc[2]['result'] == 'pass'
    assert slurm_nodes(box, hpcc[2]['jobid']) == ['n1', 'n2']
    assert hpcc[1]['result'] == 'skip'
    assert 'HPCC needs two ranks for PingPong; its 2-node case runs it' in out
    # NPB where available: not here, each skipped with one line saying so.
    npb = [c for c in cases if c['name'].startswith('NPBScaling')]
    assert npb and all(c['result'] == 'skip' for c in npb)
    assert 'NPB not provided' in out
    # Point-to-point between the two nodes, both MPIs, over the network.
    p2p = {c['environ']: c for c in ran if c['name'].startswith('PointToPoint')}
    assert set(p2p) == ENVIRONS
    for c in p2p.values():
        assert sorted(c['fabric_result']['nodes']) == ['n1', 'n2']
        lat = c['fabric_result']['latency_p50_us'][0][1]
        assert lat > 0

    # Speedup and efficiency against the smallest run, for every series.
    rows = scaling.compute(scaling.series(cases))
    cg_rows = [r for r in rows if r.series.startswith('CGScalingCheck')]
    assert len(cg_rows) == 8
    for row in cg_rows:
        assert row.speedup > 0 and row.efficiency > 0
        if row.nodes == 1:
            assert (row.speedup, row.efficiency) == (1.0, 1.0)
    table = testing.acceptance('scaling', os.path.join(tmp_path, 'report.json'))
    assert table.returncode == 0, table.stderr
    assert 'speedup' in table.stdout and 'efficiency' in table.stdout


NPB_SOURCE = os.environ.get('CLUSTERBENCH_NPB_SOURCE') or os.path.join(
    PROJECT, 'tests', 'data', 'fake_npb'
)


def test_npb_runs_over_one_and_two_nodes_where_provided(box, tmp_path):
    """NPB from a source tree (a real one with CLUSTERBENCH_NPB_SOURCE; else the
    project's stand-in tree, which has NPB's build interface and output)."""
    rc, out, report = testing.reframe(
        tmp_path,
        '-n',
        'NPBScalingCheck.*benchmark=cg',
        '-p',
        '^gnu-openmpi$',
        '-S',
        f'npb_source={NPB_SOURCE}',
        '-S',
        'npb_class=S',
        checks=['reframe_checks/acceptance.py'],
        state=box,
        timeout=600,
    )
    assert rc == 0, out[-3000:]
    ran = {
        c['node_count']: c
        for c in report['runs'][0]['testcases']
        if not c['fixture'] and c['result'] == 'pass'
    }
    assert set(ran) == {1, 2}
    assert ran[2]['num_tasks'] == 2
    assert slurm_nodes(box, ran[2]['jobid']) == ['n1', 'n2']


def test_a_slow_node_is_named_with_its_figures(clean, tmp_path):
    quota = faults.quota_for(slowdown=5)
    faults.inject(clean, 'slow', 'n2', quota=quota)
    proc = battery(clean, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdicts, table = node_table(tmp_path)
    assert verdicts['n2'].verdict == nodes.FLAGGED, table
    assert verdicts['n1'].verdict == nodes.PASS, table
    named = ' '.join(verdicts['n2'].reasons)
    assert 'below its peers' in named
    assert 'n2: FLAGGED: NodeProbeCheck:' in proc.stdout or (
        'n2: FLAGGED: NodeCGCheck:' in proc.stdout
    )
    assert '1 not accepted: n2' in proc.stdout


def test_a_degraded_link_is_named_for_both_mpis(clean, tmp_path):
    faults.inject(clean, 'link', 'n2', rate='100mbit')
    rc, verdicts = fabric(clean, tmp_path, environs=sorted(ENVIRONS))
    assert rc != 0  # ReFrame itself: the worst link is below its reference
    for verdict in verdicts:
        (link,) = verdict.links
        assert link.name == 'n1<->n2'
        assert link.verdict == links.FLAGGED, links.table(verdict)
        assert 'bandwidth' in link.flags
        assert any('below the specification 50 MB/s' in r for r in link.reasons)


def test_a_lossy_link_is_named(clean, tmp_path):
    faults.inject(clean, 'loss', 'n2', percent=5)
    rc, (verdict,) = fabric(clean, tmp_path)
    (link,) = verdict.links
    assert link.verdict == links.FLAGGED, links.table(verdict)
    assert 'stalls' in link.flags, links.table(verdict)
    assert any('lost packets' in r for r in link.reasons)


def test_a_node_lost_mid_run_is_reported_and_the_others_kept(clean, tmp_path):
    env = {
        **clean.env(),
        **testing.POLL_ENV,
        'RFM_SQLITE_DB_FILE': os.path.join(tmp_path, 'results.db'),
    }
    cmd = [
        sys.executable,
        '-m',
        'clusterbench.cli.acceptance',
        'battery',
        '--config',
        testing.BOX_CONFIG,
        '--prefix',
        str(tmp_path),
        '--nodes',
        'n1,n2',
        '--only',
        'nodes',
    ]
    run = subprocess.Popen(
        cmd, cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )

    def on_n2():
        queue = slurm_output(clean, 'squeue', '-h', '-t', 'R', '-w', 'n2', '-o', '%i')
        return bool(queue.strip())

    # Wait for a battery job to run on n2, then pull the plug on n2.
    out, _ = lose_node_while(clean, run, on_n2, 'a battery job running on n2')
    text = out.decode(errors='replace')
    assert run.returncode == 1, text
    verdicts, table = node_table(tmp_path)
    assert verdicts['n2'].verdict == nodes.FAILED, table
    assert verdicts['n1'].verdict == nodes.PASS, table
    why = ' '.join(verdicts['n2'].reasons)
    assert 'NODE_FAIL on n2' in why or 'UnavailableNodes:n2' in why, why
    assert 'n2: FAILED: ' in text
    # Every result of the other node is kept.
    assert len(verdicts['n1'].figures) == 3

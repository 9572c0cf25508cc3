"""Acceptance logic on its own: robust z-scores, node ranking, link judging,
scaling arithmetic, the programs' output checks, and the box site config.

The inputs are shaped exactly like ReFrame 4.10 run reports and our
programs' JSON lines; the cluster tests run the same code on real runs.
"""

import json
import math
import os
import runpy

import pytest
from conftest import PROJECT

from clusterbench.acceptance import links, nodes, outputs, robust, runcases, scaling
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import stats

# -- robust statistics ---------------------------------------------------------


def test_robust_z_uses_median_and_mad_of_the_peers():
    peers = [10.0, 10.2, 9.8, 10.1, 9.9]
    z, centre, scale = stats.robust_z(7.0, peers, min_spread=0.0)
    assert centre == 10.0
    assert scale == pytest.approx(1.4826 * 0.1)
    assert z == pytest.approx(-3.0 / (1.4826 * 0.1))


def test_one_peer_falls_back_to_the_relative_floor():
    z, centre, scale = stats.robust_z(5.0, [10.0], min_spread=0.1)
    assert (centre, scale) == (10.0, 1.0)
    assert z == pytest.approx(-5.0)


def test_no_peers_no_verdict_and_identical_peers_without_floor():
    assert stats.robust_z(1.0, []) == (None, None, None)
    assert stats.robust_z(2.0, [1.0, 1.0], min_spread=0)[0] == math.inf
    assert stats.robust_z(1.0, [1.0, 1.0], min_spread=0)[0] == 0.0


def test_direction_from_the_unit():
    assert robust.direction_of('GB/s') == 1
    assert robust.direction_of('GFlop/s') == 1
    assert robust.direction_of('s') == -1
    assert robust.direction_of('us') == -1
    assert robust.direction_of('iterations') == 0
    assert robust.direction_of('%') == 0


# -- nodes -------------------------------------------------------------------


def case(test, node, figures, result='pass', fail_phase=None, reason=None, **more):
    """A test case as ReFrame 4.10 writes it into a run report."""
    return {
        'name': test,
        'display_name': f'{test} %.part=box:compute %.nid={node}',
        'fixture': False,
        'job_nodelist': [node] if result != 'never ran' else [],
        'result': 'fail' if result == 'never ran' else result,
        'fail_phase': fail_phase,
        'fail_reason': reason,
        'system': 'box',
        'partition': 'compute',
        'environ': 'gnu-openmpi',
        'perfvalues': {
            f'box:compute:{name}': [value, 0, None, None, unit, 'pass']
            for name, (value, unit) in figures.items()
        },
        **more,
    }


def battery(values):
    """Probe and CG cases for each node: {node: (triad, dgemm, cg)}."""
    cases = []
    for node, (triad, dgemm, cg) in values.items():
        cases.append(
            case(
                'NodeProbeCheck',
                node,
                {
                    'stream_copy': (triad * 0.9, 'GB/s'),
                    'stream_triad': (triad, 'GB/s'),
                    'dgemm': (dgemm, 'GFlop/s'),
                },
                acceptance_figures=['stream_triad', 'dgemm'],
                acceptance_spec={'min_spread': 0.05},
            )
        )
        cases.append(
            case(
                'NodeCGCheck %stencil=7 %variant=classic %ranks_per_node=1',
                node,
                {
                    'gflops': (cg, 'GFlop/s'),
                    'time': (1 / cg, 's'),
                    'iterations': (204, 'iterations'),
                },
                acceptance_figures=['gflops'],
            )
        )
    return cases


def test_a_uniform_population_passes():
    healthy = {f'n{i}': (10 + i * 0.05, 20 - i * 0.1, 1.0 + i * 0.01) for i in range(8)}
    ranked = nodes.rank(nodes.collect(battery(healthy)), z_max=3.5, min_spread=0.05)
    assert [n.verdict for n in ranked] == ['pass'] * 8
    # The figures judged are the ones the checks name, nothing else.
    assert set(ranked[0].figures) == {
        'NodeProbeCheck:stream_triad',
        'NodeProbeCheck:dgemm',
        'NodeCGCheck:gflops',
    }


def test_the_slow_node_is_named_with_the_figure_that_condemned_it():
    values = {f'n{i}': (10.0 + 0.1 * (i % 3), 20.0, 1.0) for i in range(1, 8)}
    values['n5'] = (10.0, 12.0, 1.0)  # DGEMM 40% down: compute, not memory
    ranked = nodes.rank(nodes.collect(battery(values)), z_max=3.5, min_spread=0.05)
    assert ranked[0].name == 'n5' and ranked[0].verdict == nodes.FLAGGED
    assert all(n.verdict == nodes.PASS for n in ranked[1:])
    (reason,) = ranked[0].reasons
    assert reason.startswith('NodeProbeCheck:dgemm 12 GFlop/s is 40% below')
    assert 'robust z' in reason
    assert 'n5' in nodes.table(ranked).splitlines()[1]


def test_two_nodes_the_slower_one_is_flagged_not_the_faster():
    values = {'n1': (8.0, 12.0, 1.1), 'n2': (2.0, 3.0, 0.3)}
    ranked = nodes.rank(nodes.collect(battery(values)), z_max=3.5, min_spread=0.15)
    verdicts = {n.name: n.verdict for n in ranked}
    assert verdicts == {'n1': nodes.PASS, 'n2': nodes.FLAGGED}
    assert len(ranked[0].reasons) == 3


def test_outside_reference_is_flagged_even_in_a_uniform_population():
    cases = battery({'n1': (10, 20, 1), 'n2': (10, 20, 1)})
    entry = cases[0]['perfvalues']['box:compute:dgemm']
    entry[1:4] = [30.0, -0.1, None]
    entry[5] = 'fail'
    ranked = nodes.rank(nodes.collect(cases))
    n1 = next(n for n in ranked if n.name == 'n1')
    assert n1.verdict == nodes.FLAGGED
    assert n1.reasons == [
        'NodeProbeCheck:dgemm 20 GFlop/s outside its reference 30 (-10 %/+∞)'
    ]


def test_a_lost_node_fails_with_the_reason_and_the_others_keep_their_results():
    cases = battery({'n1': (10, 20, 1), 'n2': (10, 20, 1), 'n3': (10, 20, 1)})
    lost = [c for c in cases if c['job_nodelist'] == ['n3']]
    for c in lost:
        c.update(
            result='fail',
            fail_phase='sanity',
            fail_reason='sanity error: job 34 ended NODE_FAIL on n3: a node of '
            'the job was lost',
            perfvalues={},
        )
    ranked = nodes.rank(nodes.collect(cases), expected=['n1', 'n2', 'n3', 'n4'])
    verdicts = {n.name: n.verdict for n in ranked}
    assert verdicts == {
        'n1': nodes.PASS,
        'n2': nodes.PASS,
        'n3': nodes.FAILED,
        'n4': nodes.MISSING,
    }
    n3 = next(n for n in ranked if n.name == 'n3')
    assert 'NODE_FAIL on n3' in n3.reasons[0]
    n1 = next(n for n in ranked if n.name == 'n1')
    assert len(n1.figures) == 3


# -- links -------------------------------------------------------------------


def fabric_result(names, bw, lat=12.0, stalls=None, iters=500):
    """A fabric result: bw(i, j) gives MB/s from i to j."""
    n = len(names)

    def matrix(fn):
        return [[None if i == j else fn(i, j) for j in range(n)] for i in range(n)]

    stalls = stalls or (lambda i, j: 0)
    rounds = n - 1 if n % 2 == 0 else n
    return {
        'nodes': names,
        'rounds': rounds,
        'wall_s': 1.0,
        'latency_p50_us': matrix(lambda i, j: lat),
        'latency_p99_us': matrix(lambda i, j: lat * 3),
        'latency_stalls': matrix(lambda i, j: stalls(min(i, j), max(i, j))),
        'latency_iterations': matrix(lambda i, j: iters),
        'bandwidth_mbs': matrix(bw),
        'msgrate_mmps': matrix(lambda i, j: 0.5),
    }


def test_a_capped_node_among_four_is_the_culprit():
    names = ['n1', 'n2', 'n3', 'n4']
    capped = 2
    result = fabric_result(
        names, lambda i, j: 12.0 if capped in (i, j) else 1000.0 + 10 * (i + j)
    )
    verdict = links.judge(result, {}, z_max=3.5, min_spread=0.05)
    flagged = {lk.name for lk in verdict.links if lk.verdict == links.FLAGGED}
    assert flagged == {'n1<->n3', 'n2<->n3', 'n3<->n4'}
    assert set(verdict.culprits) == {'n3'}
    assert 'bandwidth' in verdict.culprits['n3']
    text = links.table(verdict)
    assert 'culprit n3:' in text and '3 flagged' in text


def test_one_bad_cable_between_good_nodes_is_that_link_only():
    names = ['n1', 'n2', 'n3', 'n4', 'n5']
    result = fabric_result(
        names, lambda i, j: 10.0 if {i, j} == {0, 1} else 1000.0 + i + j
    )
    verdict = links.judge(result, {}, z_max=3.5, min_spread=0.05)
    flagged = [lk.name for lk in verdict.links if lk.verdict == links.FLAGGED]
    assert flagged == ['n1<->n2']
    assert verdict.culprits == {}


def test_two_nodes_a_link_is_judged_by_its_specification():
    result = fabric_result(['n1', 'n2'], lambda i, j: 12.0)
    spec = {'link_bandwidth_min_mbs': 50.0, 'link_latency_max_us': 500.0}
    verdict = links.judge(result, spec)
    (link,) = verdict.links
    assert link.verdict == links.FLAGGED
    assert link.flags == {'bandwidth'}
    assert link.reasons[0] == (
        'bandwidth n1->n2 12 MB/s below the specification 50 MB/s'
    )
    healthy = links.judge(fabric_result(['n1', 'n2'], lambda i, j: 300.0), spec)
    assert healthy.links[0].verdict == links.PASS


def test_stalls_of_a_lossy_link_are_flagged_by_default():
    result = fabric_result(
        ['n1', 'n2', 'n3'],
        lambda i, j: 300.0,
        stalls=lambda i, j: 9 if (i, j) == (0, 2) else 0,
        iters=90,
    )
    verdict = links.judge(result, {})
    flagged = {lk.name: lk for lk in verdict.links if lk.verdict == links.FLAGGED}
    assert list(flagged) == ['n1<->n3']
    assert flagged['n1<->n3'].flags == {'stalls'}
    assert '9 of 90 round trips (10.0%)' in flagged['n1<->n3'].reasons[0]


# -- scaling -----------------------------------------------------------------


def scaling_case(nodes_, mode, value, figure='time', unit='s', result='pass'):
    return {
        'name': f'CGScalingCheck %node_count={nodes_} %stencil=7 %mode={mode}',
        'fixture': False,
        'system': 'box',
        'partition': 'compute',
        'environ': 'gnu-openmpi',
        'node_count': nodes_,
        'scaling': mode,
        'scaling_figure': figure,
        'result': result,
        'perfvalues': {f'box:compute:{figure}': [value, 0, None, None, unit, 'pass']},
    }


def test_speedup_and_efficiency_against_the_smallest_run():
    cases = [
        scaling_case(1, 'strong', 8.0),
        scaling_case(2, 'strong', 5.0),
        scaling_case(4, 'strong', 2.5),
        scaling_case(1, 'weak', 2.0),
        scaling_case(2, 'weak', 2.5),
        scaling_case(2, 'rate', 10.0, 'hpl', 'GFlop/s'),
        scaling_case(4, 'rate', 16.0, 'hpl', 'GFlop/s'),
    ]
    rows = {
        (p.series.split('%mode=')[1], p.nodes): p
        for p in scaling.compute(scaling.series(cases))
    }
    assert rows['strong', 1].speedup == 1.0
    assert rows['strong', 2].speedup == pytest.approx(1.6)
    assert rows['strong', 4].efficiency == pytest.approx(0.8)
    assert rows['weak', 2].efficiency == pytest.approx(0.8)
    assert rows['weak', 2].speedup == pytest.approx(1.6)
    # A rate: the base is the smallest count that ran (2 here).
    assert rows['rate', 4].speedup == pytest.approx(1.6)
    assert rows['rate', 4].efficiency == pytest.approx(0.8)
    assert 'efficiency' in scaling.table(list(rows.values())).splitlines()[0]


# -- program outputs --------------------------------------------------------


def fabric_text(result, done='COMPLETE'):
    return f'fabric 1.0.0\nFABRIC_JSON: {json.dumps(result)}\nFABRIC {done}\n'


def full_result(names):
    result = fabric_result(names, lambda i, j: 100.0)
    n = len(names)
    for key in outputs.MATRICES:
        result.setdefault(key, result['bandwidth_mbs'])
    result['ranks'] = n
    result['complete'] = True
    result['schedule'] = [[[0, 1]]] if n == 2 else []
    return result


def test_a_fabric_output_is_checked_against_the_request():
    result = full_result(['n1', 'n2'])
    assert outputs.fabric(fabric_text(result), nodes=2, ranks=2)['nodes'] == [
        'n1',
        'n2',
    ]
    with pytest.raises(ClusterbenchError, match='ran on 2 node'):
        outputs.fabric(fabric_text(result), nodes=3)
    with pytest.raises(ClusterbenchError, match='mismatched'):
        outputs.fabric(fabric_text(result) * 2)
    result['complete'] = False
    result['latency_iterations'][1][0] = 0
    with pytest.raises(ClusterbenchError, match='pairs not measured: n2-n1'):
        outputs.fabric(fabric_text(result, 'INCOMPLETE'))


def test_a_nodeprobe_output_must_have_verified():
    good = {k: 1.0 for k in outputs.PROBE_FIGURES} | {'verified': True}
    text = f'NODEPROBE_JSON: {json.dumps(good)}\nVERIFICATION SUCCESSFUL\n'
    assert outputs.nodeprobe(text)['dgemm_gflops'] == 1.0
    with pytest.raises(ClusterbenchError, match='verification FAILED'):
        outputs.nodeprobe(text.replace('SUCCESSFUL', 'FAILED'))


# -- the box site config --------------------------------------------------------


def test_box_config_loads_without_a_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv('CLUSTERBENCH_BOX_DIR', str(tmp_path))
    monkeypatch.delenv('SLURM_CONF', raising=False)
    config = runpy.run_path(os.path.join(PROJECT, 'site_configs', 'box.py'))[
        'site_configuration'
    ]
    (system,) = config['systems']
    (part,) = system['partitions']
    assert (system['name'], part['name']) == ('box', 'compute')
    assert (part['scheduler'], part['launcher']) == ('slurm', 'srun')
    assert part['processor']['num_cpus'] == 1
    assert part['extras']['num_nodes'] == 2 and part['extras']['mem_per_node'] > 0
    assert 'multinode' in part['features']
    envs = {e['name']: dict(e['env_vars']) for e in config['environments']}
    assert envs['gnu-openmpi']['SLURM_MPI_TYPE'] == 'pmix'
    assert envs['gnu-openmpi']['OMPI_MCA_btl'] == 'tcp,self'
    assert envs['gnu-openmpi']['OMPI_MCA_btl_tcp_if_include'] == 'eth0'
    assert envs['gnu-mpich']['SLURM_MPI_TYPE'] == 'pmi2'
    assert envs['gnu-mpich']['UCX_TLS'] == 'tcp,self'
    # common.py's own variables are kept (root, wrappers first on PATH).
    assert envs['gnu-openmpi']['OMPI_ALLOW_RUN_AS_ROOT'] == '1'
    assert 'SLURM_CONF' not in os.environ


def test_a_retried_case_counts_by_its_retry_and_reruns_are_samples(tmp_path):
    first = battery({'n1': (10, 20, 1), 'n2': (10, 20, 1)})
    lost = dict(first[2], result='fail', fail_phase='sanity', perfvalues={})
    retried = first[2]
    rerun = dict(first[0])
    path = tmp_path / 'report.json'
    path.write_text(
        json.dumps(
            {
                'session_info': {'uuid': 'retried'},
                'runs': [
                    {'testcases': [first[0], first[1], lost, first[3]]},
                    {'testcases': [retried]},
                    {'testcases': [rerun]},
                ],
            }
        )
    )
    cases = runcases.load([str(path)])
    assert len(cases) == 5
    assert not any(c['result'] == 'fail' for c in cases)
    ranked = nodes.rank(nodes.collect(cases))
    n1 = next(n for n in ranked if n.name == 'n1')
    assert len(n1.figures['NodeProbeCheck:dgemm'].values) == 2
    with pytest.raises(ClusterbenchError, match='not a ReFrame run report'):
        (tmp_path / 'bad.json').write_text('[]')
        runcases.load([str(tmp_path / 'bad.json')])

"""The report's data assembly, plots and HTML on ReFrame-shaped test cases.

Fast: no ReFrame run. Cases carry the fields ReFrame 4.10 writes (see
test_report_runs.py for the same on real runs); communication curves are
the real recorded IMB/OSU/NetPIPE outputs of ../shared/fixtures, parsed by
the project's parsers and kept as the checks keep them.
"""

import math
import os

import pytest
from conftest import read

from clusterbench.bench import curves as curvelib
from clusterbench.parsers import imb, netpipe, osu
from clusterbench.report import assemble
from clusterbench.report.assemble import Run

EVIL = '<script>alert(1)</script>'


def case(
    name='HPCCCheck',
    system='local',
    partition='default',
    environ='gnu-openmpi',
    figures=None,
    nodes=('vm',),
    num_tasks=2,
    uuid=None,
    **extra,
):
    """One test case as ReFrame 4.10 writes it in its JSON report."""
    case.count = getattr(case, 'count', 0) + 1
    perf = {}
    for var, spec in (figures or {}).items():
        value, unit, *ref = spec if isinstance(spec, tuple) else (spec, 'GFlop/s')
        ref = ref[0] if ref else (0, None, None)
        perf[f'{system}:{partition}:{var}'] = [value, *ref, unit, 'pass']
    out = {
        'name': name,
        'system': system,
        'partition': partition,
        'environ': environ,
        'fixture': False,
        'result': 'pass',
        'fail_phase': None,
        'fail_reason': None,
        'job_nodelist': list(nodes),
        'num_tasks': num_tasks,
        'job_completion_time_unix': 1795300382.5 + case.count,
        'perfvalues': perf,
        'uuid': uuid or f'session:0:{case.count}',
        'run_index': 0,
    }
    out.update(extra)
    return out


def run(*cases, source='r.json', uuid='s1'):
    return Run(
        source,
        {
            'session_info': {
                'uuid': uuid,
                'hostname': 'vm',
                'time_start_unix': 1795300000.0,
                'time_end_unix': 1795300400.0,
                'version': '4.10.4',
                'cmdline': 'reframe -r',
            },
            'runs': [{'testcases': list(cases)}],
        },
    )


def build(*cases):
    return assemble.assemble([run(*cases)])


def only(data, variable):
    return next(b for b in data.benchmarks if b.variable == variable)


# ------------------------------------------------------------ labels


def test_labels_from_environment_name_extras_and_parameters():
    data = build(
        case(environ='gnu-openmpi', figures={'hpl': 10.0}),
        case(
            environ='prgenv-a',
            figures={'hpl': 11.0},
            environ_extras={'mpi': 'mvapich2', 'compiler': 'intel', 'blas': 'mkl'},
        ),
        case(
            name='HPLCheck %mpi=openmpi %blas=blis',
            environ='spack-x',
            figures={'hpl': 12.0},
            mpi='openmpi',
            blas='blis',
            num_nodes=4,
            nodes=('n1', 'n2', 'n3', 'n4'),
        ),
    )
    by_env = {c.environ: c for c in data.configs}
    gnu = by_env['gnu-openmpi']
    assert (gnu.mpi, gnu.compiler, gnu.blas) == ('openmpi', 'gcc', None)
    assert gnu.label == (
        'local:default · gnu-openmpi · MPI openmpi · gcc · BLAS ? · 1 node'
    )
    extras = by_env['prgenv-a']
    assert (extras.mpi, extras.compiler, extras.blas) == ('mvapich2', 'intel', 'mkl')
    assert extras.short == 'local/default prgenv-a mvapich2 intel mkl 1n'
    spack = by_env['spack-x']
    assert (spack.mpi, spack.blas, spack.nodes) == ('openmpi', 'blis', 4)
    assert spack.label.endswith('4 nodes')


def test_placement_parameters_do_not_make_new_figures():
    data = build(
        case(name='HPCCCheck %.part=local:default %.nid=n1', nodes=['n1'],
             figures={'hpl': 10.0}),
        case(name='HPCCCheck %.part=local:default %.nid=n2', nodes=['n2'],
             figures={'hpl': 12.0}),
    )  # fmt: skip
    (b,) = data.benchmarks
    assert b.test == 'HPCCCheck'
    (cell,) = data.row(b)
    assert sorted(cell.values) == [10.0, 12.0] and cell.value == 11.0


# -------------------------------------------------------- verdicts, states


def test_verdicts_failures_skips_and_missing_are_distinct():
    ref = (10.5, -0.1, 0.1)
    data = build(
        case(environ='gnu-openmpi', figures={'hpl': (10.0, 'GFlop/s', ref)}),
        case(environ='gnu-mpich', figures={'hpl': (8.0, 'GFlop/s', ref)}),
        case(environ='intel-impi', figures={'hpl': 9.0}),
        case(environ='aocc-openmpi', result='fail', fail_phase='sanity',
             fail_reason='sanity error: hpcc exited with code 1'),
        case(name='NetPIPECheck %placement=inter', environ='gnu-openmpi',
             result='skip', skip_reason='local:default has one node', nodes=[]),
        case(name='CGSolverCheck', environ='gnu-openmpi', figures={'gflops': 3.0}),
    )  # fmt: skip
    hpl = next(b for b in data.benchmarks if b.variable == 'hpl')
    states = {c.config.environ: c for c in data.row(hpl)}
    assert states['gnu-openmpi'].state == 'pass'
    assert states['gnu-mpich'].state == 'SLOWER'
    assert states['intel-impi'].state == 'no reference'
    failed = states['aocc-openmpi']
    assert failed.state == 'FAILED' and failed.value is None
    assert failed.reason == 'sanity: hpcc exited with code 1'
    gflops = only(data, 'gflops')
    assert [c.state for c in data.row(gflops)].count('missing') == 3
    # A skipped test is neither a failure nor a configuration.
    assert data.skipped == [
        ('local', 'default', 'gnu-openmpi', 'NetPIPECheck %placement=inter',
         'local:default has one node')
    ]  # fmt: skip
    assert len(data.failures) == 1 and len(data.configs) == 4
    assert states['gnu-openmpi'].best and not states['gnu-mpich'].best


def test_repeated_samples_pool_and_a_session_read_twice_counts_once():
    first = case(figures={'hpl': 10.0}, uuid='s1:0:0')
    rerun = case(figures={'hpl': 12.0}, uuid='s1:1:0', run_index=1)
    data = assemble.assemble([run(first, rerun), run(first, rerun, source='db')])
    (cell,) = data.row(only(data, 'hpl'))
    assert cell.values == [10.0, 12.0]


# --------------------------------------------------------- communication


def kept(*curves):
    return {c.name: c.as_dict() for c in curves}


@pytest.fixture
def imb_curves(fixtures_dir):
    text = read(os.path.join(fixtures_dir, 'imb', 'IMB-MPI1.np2.out'))
    return {name: c for (name, _), c in imb.parse(text).items()}


def test_imb_osu_netpipe_curves_from_the_report(imb_curves, fixtures_dir):
    mbw = osu.parse(read(os.path.join(fixtures_dir, 'osu', 'osu_mbw_mr.out')))
    lat = osu.parse(read(os.path.join(fixtures_dir, 'osu', 'osu_latency.out')))
    np_ = netpipe.parse(
        read(os.path.join(fixtures_dir, 'netpipe', 'np.openmpi.sharedmem.out'))
    )
    imb_all = imb_curves.values()
    data = build(
        case(name='IMBPointToPointCheck %placement=inter', curves=kept(*imb_all),
             link_peak={'peak_mbs': 12500.0, 'how': 'declared'}, nodes=['n1', 'n2'],
             num_nodes=2),
        case(name='OSUPointToPointCheck %placement=intra', curves=kept(mbw, lat),
             efficiency_note='intra-node run: the link is not used'),
        case(name='NetPIPECheck %placement=intra', curves=kept(np_)),
    )  # fmt: skip
    comm = data.communication
    assert not comm.empty
    pingpong = comm.lines[('PingPong', 'latency')]
    assert {line.curve.tool for line in pingpong} == {
        'IMB',
        'OSU osu_latency',
        'NetPIPE',
    }
    imb_line = next(ln for ln in pingpong if ln.curve.tool == 'IMB')
    assert imb_line.curve.points[0] == (0, 0.43)
    assert imb_line.placement == 'inter'
    assert ('MessageRate', 'rate') in comm.lines
    for op in ('Sendrecv', 'Exchange', 'Bcast', 'Reduce', 'Allreduce'):
        assert (op, 'latency') in comm.lines
    assert [(c.id, tool, v) for c, tool, v in comm.barrier] == [
        (imb_line.config.id, 'IMB, inter-node', 0.57)
    ]
    rows = {(r.source, r.placement): r for r in comm.table}
    imb_row = rows[('IMB', 'inter')]
    assert imb_row.latency_us == 0.43 and imb_row.latency_bytes == 0
    assert imb_row.peak_gbs == pytest.approx(12.46788)
    assert imb_row.peak_bytes == 1048576
    assert imb_row.declared_gbs == 12.5
    assert imb_row.efficiency == pytest.approx(12.46788 / 12.5)
    osu_row = rows[('OSU osu_latency', 'intra')]
    assert osu_row.declared_gbs is None and osu_row.efficiency is None
    assert 'link is not used' in osu_row.note


def test_reruns_of_a_configuration_are_one_line_their_median(fixtures_dir):
    lat = osu.parse(read(os.path.join(fixtures_dir, 'osu', 'osu_latency.out')))
    slower = curvelib.Curve(
        lat.name,
        lat.sizes,
        {c: (u, [v * 2 for v in vals]) for c, (u, vals) in lat.columns.items()},
        lat.meta,
    )
    name = 'OSUPointToPointCheck %placement=intra'
    data = assemble.assemble(
        [
            run(
                case(name=name, curves=kept(lat), uuid='s1:0:0'),
                case(name=name, curves=kept(slower), uuid='s1:1:0', run_index=1),
                case(name=name, curves=kept(slower), uuid='s1:2:0', run_index=2),
            )
        ]
    )
    (line,) = data.communication.lines[('PingPong', 'latency')]
    assert line.runs == 3 and 'median of 3 runs' in line.label
    first = dict(zip(lat.sizes, lat.values('latency')))
    for size, value in line.curve.points:
        assert value == pytest.approx(2 * first[size])


def test_curve_files_are_read_when_the_report_has_no_curves(tmp_path, imb_curves):
    path = tmp_path / 'curve_pingpong.csv'
    curvelib.write_csv(path, imb_curves['PingPong'])
    data = build(case(name='IMBPointToPointCheck', curve_files=[str(path)]))
    (line,) = data.communication.lines[('PingPong', 'latency')]
    assert line.curve.points[-1] == (4194304, 680.79)
    gone = build(case(name='IMBPointToPointCheck', curve_files=['/nonexistent.csv']))
    assert gone.communication.empty
    assert '/nonexistent.csv not found' in gone.communication.reason


# ------------------------------------------- scaling, acceptance, sensitivity


def test_scaling_over_node_counts():
    data = build(
        *(
            case(name='NPBCheck %benchmark=ft', figures={'mops_total': (v, 'Mop/s')},
                 num_nodes=n, num_tasks=2 * n, nodes=[f'n{i}' for i in range(n)])
            for n, v in ((1, 100.0), (2, 180.0), (4, 300.0))
        ),
    )  # fmt: skip
    (series,) = data.scaling_series
    assert [(p.ranks, p.nodes) for p in series.points] == [(2, 1), (4, 2), (8, 4)]
    assert [p.speedup for p in series.points] == [1.0, 1.8, 3.0]
    assert [p.efficiency for p in series.points] == [1.0, 0.9, 0.75]
    # Three node counts: three configurations (the node count is part of one).
    assert [c.nodes for c in data.configs] == [1, 2, 4]


def test_slow_node_and_slow_link_are_flagged_by_name():
    nodes = ['n1', 'n2', 'n3', 'n4', 'n5']
    per_node = [
        case(name=f'StreamCheck %.nid={n}', nodes=[n], num_tasks=1,
             figures={'stream_triad': (30.0 if n == 'n3' else 40.0 + i * 0.2, 'GB/s')})
        for i, n in enumerate(nodes)
    ]  # fmt: skip
    pairs = []
    for i, a in enumerate(nodes[:4]):
        for b in nodes[i + 1 : 4]:
            slow = {a, b} == {'n2', 'n4'}
            pairs.append(
                case(name=f'PairCheck %pair={a}-{b}', nodes=[a, b], num_tasks=2,
                     figures={'latency': (6.0 if slow else 2.0, 'us'),
                              'bandwidth': (4.0 if slow else 12.0, 'GB/s')})
            )  # fmt: skip
    data = build(*per_node, *pairs)
    (group,) = data.acceptance.nodes
    assert set(group.values) == set(nodes)
    assert list(group.flagged) == ['n3']
    matrices = {m.title: m for m in data.acceptance.pairs}
    assert set(matrices) == {'PairCheck · bandwidth', 'PairCheck · latency'}
    for matrix in matrices.values():
        assert matrix.nodes == ['n1', 'n2', 'n3', 'n4']
        assert len(matrix.values) == 6
        assert list(matrix.flagged) == [('n2', 'n4')]


def test_elasticity_is_the_log_log_slope_across_configurations():
    cases = []
    for env, bw in (('e1', 100.0), ('e2', 150.0), ('e3', 200.0), ('e4', 400.0)):
        cases.append(case(name='StreamCheck', environ=env,
                          figures={'stream_triad': (bw, 'GB/s')}))  # fmt: skip
        cases.append(
            case(name='NPBCheck %benchmark=ft', environ=env,
                 figures={'mops_total': (50.0 * math.sqrt(bw), 'Mop/s')})
        )  # fmt: skip
    data = build(*cases)
    rows = {(e.benchmark.variable, e.resource): e for e in data.sensitivity.rows}
    ft = rows[('mops_total', 'memory bandwidth')]
    assert ft.slope == pytest.approx(0.5) and ft.r2 == pytest.approx(1.0)
    assert ft.n == 4
    assert ft.statement.startswith('300% more memory bandwidth went with 100% more')
    assert '4 configurations' in ft.statement
    # No latency figure anywhere: said, not computed.
    lat = rows[('mops_total', 'latency')]
    assert lat.slope is None and '0 configuration(s)' in lat.reason
    few = build(*cases[:4])
    assert few.sensitivity.empty and '3 or more' in few.sensitivity.reason


def test_loglog_slope_of_a_constant_resource_is_undefined():
    assert assemble.loglog_slope([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == (None, None)
    slope, r2 = assemble.loglog_slope([1.0, 10.0, 100.0], [5.0, 50.0, 500.0])
    assert slope == pytest.approx(1.0) and r2 == pytest.approx(1.0)


# ------------------------------------------------ configurations, fabric


def test_tests_silent_on_the_stack_join_their_environment_s_configuration():
    data = build(
        case(name='HPCCCheck', environ='gnu-openmpi', figures={'hpl': 9.0}),
        case(name='HPLCheck %mpi=openmpi %blas=openblas', environ='gnu-openmpi',
             mpi='openmpi', blas='openblas', figures={'hpl': 10.0}),
        case(name='StreamCheck %compiler=gcc', environ='gnu-openmpi', nodes=[],
             scheduler='local', compiler='gcc', result='fail',
             fail_phase='compile_wait', fail_reason='build error: exit code 127'),
    )  # fmt: skip
    (config,) = data.configs
    assert (config.mpi, config.compiler, config.blas, config.nodes) == (
        'openmpi',
        'gcc',
        'openblas',
        1,
    )
    assert {b.test for b in data.benchmarks} == {
        'HPCCCheck',
        'HPLCheck %mpi=openmpi %blas=openblas',
        'StreamCheck %compiler=gcc',
    }
    (fail,) = [c for b in data.benchmarks for c in data.row(b) if c.state == 'FAILED']
    assert fail.reason == 'compile_wait: build error: exit code 127'


def test_fabric_matrices_name_the_slow_link_and_the_node_battery_its_node():
    names = ['n1', 'n2', 'n3', 'n4']
    n = len(names)

    def matrix(value, slow=None):
        return [
            [
                None
                if i == j
                else (slow if {names[i], names[j]} == {'n2', 'n4'} else value)
                for j in range(n)
            ]
            for i in range(n)
        ]

    result = {
        'nodes': names,
        'latency_p50_us': matrix(20.0, 21.0),
        'latency_p99_us': matrix(30.0),
        'latency_stalls': matrix(0),
        'latency_iterations': matrix(1000),
        'bandwidth_mbs': matrix(1200.0, 300.0),
        'msgrate_mmps': matrix(0.5),
    }
    battery = [
        case(name=f'NodeProbeCheck %.nid={h}', nodes=[h], num_tasks=1,
             figures={'stream_triad': (9.0 if h == 'n3' else 12.0 + i * 0.1, 'GB/s')})
        for i, h in enumerate(names)
    ]  # fmt: skip
    data = build(
        case(name='FabricCheck', nodes=names, num_tasks=4, fabric_result=result),
        *battery,
    )
    acc = data.acceptance
    bandwidth = next(m for m in acc.pairs if m.title == 'FabricCheck · bandwidth')
    assert bandwidth.values[('n2', 'n4')] == 300.0
    assert set(bandwidth.flagged) == {('n2', 'n4')}
    latency = next(m for m in acc.pairs if m.title.startswith('FabricCheck · latency'))
    assert not latency.flagged
    verdicts = {node: state for _, node, state, _ in acc.node_verdicts}
    assert verdicts == {'n1': 'pass', 'n2': 'pass', 'n3': 'FLAGGED', 'n4': 'pass'}
    (group,) = acc.nodes
    assert list(group.flagged) == ['n3']
    assert 'below its peers' in group.flagged['n3']

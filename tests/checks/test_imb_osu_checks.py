"""The IMB and OSU checks: skipped without the suites, run with them.

Without a prefix every case is skipped with one line saying how to provide
the suite. Recorded outputs played back by stand-in binaries exercise the
whole check (placement, parsing, figures, kept curves, bad input) on any
machine; ``CLUSTERBENCH_OSU_PREFIX`` / ``CLUSTERBENCH_IMB_PREFIX`` pointing at
installed suites run the real ones.
"""

import os

import pytest
from conftest import PROJECT, read
from rfm import reframe

from clusterbench.bench import curves
from clusterbench.checks import comm
from clusterbench.parsers import imb, osu

pytestmark = pytest.mark.integration

NO_PREFIX = {'CLUSTERBENCH_OSU_PREFIX': '', 'CLUSTERBENCH_IMB_PREFIX': ''}
OSU_P2P = 'OSUPointToPointCheck%.*placement=intra'
OSU_ALLREDUCE = 'OSUCollectiveCheck%.*benchmark=osu_allreduce'
IMB_P2P = 'IMBPointToPointCheck%.*placement=intra'


#: The suites' releases on a loopback port nothing listens on: these tests
#: are about installed suites (tests/bench/test_suite_release.py builds releases).
NO_RELEASES = (
    'osu_url=http://127.0.0.1:9/osu-micro-benchmarks-7.4.tar.gz',
    'imb_url=http://127.0.0.1:9/IMB-v2021.7.tar.gz',
)


def run(prefix, names, settings=(), env=None):
    """ReFrame on gnu-openmpi for the tests matching *names*, with ``-S``s."""
    settings = [*NO_RELEASES, *settings]
    env = {'CLUSTERBENCH_MIRROR': '', **(env or {})}
    args = ['-p', 'gnu-openmpi']
    for name in names:
        args += ['-n', name]
    for setting in settings:
        args += ['-S', setting]
    return reframe(prefix, *args, checks='reframe_checks', env=env)


def cases_of(report, prefix=''):
    """The checks' cases (not the release and build fixtures)."""
    return [
        c
        for c in report['runs'][0]['testcases']
        if c['name'].startswith(prefix) and not c['fixture']
    ]


def values(case):
    return {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}


def by_benchmark(report):
    return {c['benchmark']: c for c in cases_of(report, 'OSU')}


# -- no suite ------------------------------------------------------------


def test_without_a_prefix_every_case_is_skipped_with_one_line(tmp_path):
    rc, out, report = run(tmp_path, ['OSU', 'IMB'], env=NO_PREFIX)
    assert rc == 0, out
    cases = cases_of(report)
    # OSU: 4 point-to-point x 2 placements + 3 collectives; IMB: 2 + 1.
    assert len(cases) == 14
    assert {c['result'] for c in cases} == {'skip'}
    skips = [line for line in out.splitlines() if '[     SKIP ]' in line]
    assert len(skips) == 14
    for suite in ('osu', 'imb'):
        lines = [s for s in skips if s.split()[4].startswith(suite.upper())]
        assert lines
        for line in lines:
            assert (
                f'not installed: give its prefix with -S {suite}_prefix=DIR (or '
                f'CLUSTERBENCH_{suite.upper()}_PREFIX=DIR), use an environment '
                f"with feature '{suite}', or set CLUSTERBENCH_MIRROR to a mirror "
                'made with clusterbench mirror; its release: http://127.0.0.1:9/'
            ) in line
    assert all(c['skip_reason'] for c in cases)
    assert 'Traceback' not in out and 'FAIL' not in out


def test_a_prefix_without_the_suite_is_skipped_saying_where(tmp_path):
    empty = tmp_path / 'empty'
    empty.mkdir()
    rc, out, report = run(
        tmp_path, [OSU_P2P, OSU_ALLREDUCE], [f'osu_prefix={empty}'], NO_PREFIX
    )
    assert rc == 0, out
    for case in cases_of(report):
        assert case['result'] == 'skip'
        assert case['skip_reason'] == (
            f'{case["benchmark"]} not found under osu_prefix={empty} '
            f'(looked in ., bin, libexec/...)'
        )


# -- finding an installed suite ------------------------------------------


def executable(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\n')
    path.chmod(0o755)
    return str(path)


def test_binaries_are_found_in_the_usual_install_layouts(tmp_path):
    mpi = tmp_path / 'libexec' / 'osu-micro-benchmarks' / 'mpi'
    bw = executable(mpi / 'pt2pt' / 'osu_bw')
    allreduce = executable(mpi / 'collective' / 'blocking' / 'osu_allreduce')
    imb_mpi1 = executable(tmp_path / 'bin' / 'IMB-MPI1')
    assert comm.find_executable('osu_bw', str(tmp_path)) == bw
    assert comm.find_executable('osu_allreduce', str(tmp_path)) == allreduce
    assert comm.find_executable('IMB-MPI1', str(tmp_path)) == imb_mpi1
    assert comm.find_executable('osu_bibw', str(tmp_path)) is None
    # Not executable: not a benchmark.
    (mpi / 'pt2pt' / 'osu_latency').write_text('')
    assert comm.find_executable('osu_latency', str(tmp_path)) is None
    # A script links no MPI: nothing to compare with the environment's.
    assert comm.linked_mpi(bw) is None


def test_pinning_options_per_launcher():
    opts, env, note = comm.pinning_options('mpirun', 'openmpi', 1)
    assert opts == ['--map-by', 'ppr:1:node', '--bind-to', 'core', '--report-bindings']
    opts, env, note = comm.pinning_options('mpiexec', 'mpich', 2)
    assert opts == ['-ppn', '2', '-bind-to', 'core']
    assert env == {'HYDRA_TOPO_DEBUG': '1'} and note == ''
    opts, env, note = comm.pinning_options('srun', 'openmpi', 1)
    assert opts == ['--distribution=block:block', '--cpu-bind=verbose,cores']
    opts, _, note = comm.pinning_options('ibrun', 'openmpi', 1)
    assert opts == [] and note == 'launcher ibrun: pinning left to its defaults'


# -- recorded outputs played back through the checks ---------------------

STAND_IN = """\
#!/bin/sh
# Stands in for {name}: rank 0 prints a recorded output.
[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] || {others}
{command} '{source}'
"""


def stand_in(prefix, name, source, lines=None, every_rank=False):
    path = prefix / 'bin' / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        STAND_IN.format(
            name=name,
            source=source,
            command=f'head -n {lines}' if lines else 'cat',
            others='true' if every_rank else 'exit 0',
        )
    )
    path.chmod(0o755)


@pytest.fixture(scope='module')
def played_back_osu(tmp_path_factory, fixtures_dir):
    prefix = tmp_path_factory.mktemp('osu-prefix')
    for bench in ('osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr', 'osu_allreduce'):
        stand_in(prefix, bench, os.path.join(fixtures_dir, 'osu', f'{bench}.out'))
    out = tmp_path_factory.mktemp('osu-run')
    rc, log, report = run(
        out, [OSU_P2P, OSU_ALLREDUCE], [f'osu_prefix={prefix}'], NO_PREFIX
    )
    assert report is not None, log
    return rc, log, report


def test_osu_figures_are_those_of_the_output(played_back_osu, fixtures_dir):
    rc, log, report = played_back_osu
    assert rc == 0, log
    found = by_benchmark(report)
    benches = {'osu_latency', 'osu_bw', 'osu_bibw', 'osu_mbw_mr', 'osu_allreduce'}
    assert set(found) == benches
    for bench, case in found.items():
        assert case['result'] == 'pass', case['fail_reason']
        curve = osu.parse(read(os.path.join(fixtures_dir, 'osu', f'{bench}.out')))
        figures = values(case)
        if bench == 'osu_latency':
            assert figures == {'latency_1B': 0.14, 'latency_8B': 0.17}
        elif bench == 'osu_allreduce':
            assert figures == {
                'latency_8B': 0.28,
                'latency_1KiB': 0.60,
                'latency_1MiB': 155.88,
            }
            assert case['num_tasks'] == max(os.cpu_count(), 2)
        else:
            expected = curves.bandwidth_figures(curve, 'bandwidth')
            assert figures['bandwidth_peak'] == expected['bandwidth_peak'][0]
            assert figures['bandwidth_1MiB'] == expected['bandwidth_1MiB'][0]
            assert figures['n_half'] == pytest.approx(expected['n_half'][0])
        if bench == 'osu_mbw_mr':
            assert figures['message_rate_1B'] == 10383963.27
            assert case['pairs'] == 1
        (path,) = case['curve_files']
        assert curves.read_csv(path).sizes == curve.sizes
        top = 1 << 20 if bench == 'osu_allreduce' else 4 << 20
        assert case['executable_opts'][:2] == ['-m', f'1:{top}']
        assert case['statistic'].startswith('OSU: per size, the mean')


def test_osu_output_cut_short_is_a_sanity_failure(tmp_path, fixtures_dir):
    prefix = tmp_path / 'prefix'
    stand_in(prefix, 'osu_bw', os.path.join(fixtures_dir, 'osu', 'osu_bw.out'), 12)
    rc, log, report = run(
        tmp_path, [f'{OSU_P2P}%benchmark=osu_bw'], [f'osu_prefix={prefix}'], NO_PREFIX
    )
    assert rc != 0
    (case,) = cases_of(report)
    assert case['fail_phase'] == 'sanity'
    assert case['fail_reason'].endswith(
        'rfm_job.out: sizes 1..128 (8 sizes), expected 1..4194304 (23 sizes): '
        'output truncated?'
    )
    assert all(v[0] is None for v in case['perfvalues'].values())


@pytest.fixture(scope='module')
def played_back_imb(tmp_path_factory, fixtures_dir):
    prefix = tmp_path_factory.mktemp('imb-prefix')
    recorded = os.path.join(fixtures_dir, 'imb', 'IMB-MPI1.np2.out')
    stand_in(prefix, 'IMB-MPI1', recorded)
    out = tmp_path_factory.mktemp('imb-run')
    # The recorded run has no PingPing or Alltoall, and ends at 4 MiB.
    settings = [
        f'imb_prefix={prefix}',
        'IMBPointToPointCheck.imb_benchmarks=PingPong,Sendrecv,Exchange',
        'IMBCollectiveCheck.imb_benchmarks=Bcast,Reduce,Allreduce,Barrier',
        'imb_max_log2=22',
    ]
    rc, log, report = run(out, [IMB_P2P, 'IMBCollective'], settings, NO_PREFIX)
    assert report is not None, log
    return rc, log, report


def test_imb_figures_are_those_of_the_output(played_back_imb):
    rc, log, report = played_back_imb
    if os.cpu_count() != 2:
        pytest.skip('the recorded collectives ran on 2 ranks, one per core here')
    assert rc == 0, log
    (p2p,) = cases_of(report, 'IMBPointToPoint')
    (coll,) = cases_of(report, 'IMBCollective')
    for case in (p2p, coll):
        assert case['result'] == 'pass', case['fail_reason']
    figures = values(p2p)
    assert figures['pingpong_latency_0B'] == 0.43
    assert figures['pingpong_bandwidth_1MiB'] == 12467.88
    assert figures['sendrecv_latency_8B'] == 0.46  # t_max
    assert figures['exchange_bandwidth_peak'] == 23624.19
    assert 'pingpong_link_efficiency' not in figures
    assert p2p['executable_opts'] == [
        'PingPong',
        'Sendrecv',
        'Exchange',
        '-msglog',
        '0:22',
        '-npmin',
        '2',
    ]
    names = {os.path.basename(p) for p in p2p['curve_files']}
    assert names == {'curve_pingpong.csv', 'curve_sendrecv.csv', 'curve_exchange.csv'}
    figures = values(coll)
    assert figures['allreduce_latency_1MiB'] == 757.06  # t_avg
    assert figures['barrier_latency'] == 0.57
    assert figures['bcast_latency_1KiB'] == 1.20


def test_prefixes_with_shell_syntax_run_nothing_and_the_suites_work(
    tmp_path, fixtures_dir
):
    # Directory names that run two commands if a script uses them unquoted.
    osu_prefix = tmp_path / 'osu a b;touch pwned1;$(touch pwned2)'
    imb_prefix = tmp_path / 'imb a b;touch pwned3;$(touch pwned4)'
    stand_in(
        osu_prefix, 'osu_latency', os.path.join(fixtures_dir, 'osu', 'osu_latency.out')
    )
    stand_in(
        imb_prefix, 'IMB-MPI1', os.path.join(fixtures_dir, 'imb', 'IMB-MPI1.np2.out')
    )
    rc, log, report = reframe(
        tmp_path / 'run', '-p', 'gnu-openmpi',
        '-n', f'{OSU_P2P}%benchmark=osu_latency', '-n', IMB_P2P,
        '-S', f'osu_prefix={osu_prefix}', '-S', f'imb_prefix={imb_prefix}',
        '-S', 'imb_benchmarks=PingPong,Sendrecv,Exchange', '-S', 'imb_max_log2=22',
        '--keep-stage-files', env=NO_PREFIX,
    )  # fmt: skip
    assert rc == 0, log
    found = {c['name'].split()[0]: c for c in cases_of(report)}
    assert set(found) == {'OSUPointToPointCheck', 'IMBPointToPointCheck'}
    for case in found.values():
        assert case['result'] == 'pass', case['fail_reason']
        assert values(case)
    assert values(found['OSUPointToPointCheck'])['latency_8B'] == 0.17
    assert values(found['IMBPointToPointCheck'])['pingpong_latency_0B'] == 0.43
    markers = [
        name
        for top in (tmp_path, PROJECT)
        for _, _, files in os.walk(top)
        for name in files
        if name.startswith('pwned')
    ]
    assert markers == []


@pytest.mark.parametrize(
    'kind, how, reason',
    [
        ('cut', {'lines': 80}, 'no "All processes entering MPI_Finalize" line'),
        ('every-rank', {'every_rank': True}, '2 IMB banners, expected one'),
        ('missing', {}, 'rfm_job.out: no PingPing on 2 processes (ran: '),
    ],
)
def test_imb_output_that_is_not_one_complete_run_is_refused(
    tmp_path, fixtures_dir, kind, how, reason
):
    prefix = tmp_path / 'prefix'
    recorded = os.path.join(fixtures_dir, 'imb', 'IMB-MPI1.np2.out')
    stand_in(prefix, 'IMB-MPI1', recorded, **how)
    settings = [f'imb_prefix={prefix}', 'imb_max_log2=22']
    if kind != 'missing':
        settings.append('imb_benchmarks=PingPong')
    rc, log, report = run(tmp_path / 'run', [IMB_P2P], settings, NO_PREFIX)
    assert rc != 0
    (case,) = cases_of(report)
    assert case['fail_phase'] == 'sanity'
    assert reason in case['fail_reason'], case['fail_reason']


def test_unknown_imb_benchmarks_are_refused_at_setup(tmp_path, fixtures_dir):
    prefix = tmp_path / 'prefix'
    stand_in(prefix, 'IMB-MPI1', os.path.join(fixtures_dir, 'imb', 'IMB-MPI1.np2.out'))
    settings = [f'imb_prefix={prefix}', 'imb_benchmarks=PingPong,Allreduce']
    rc, log, report = run(tmp_path / 'run', [IMB_P2P], settings, NO_PREFIX)
    (case,) = cases_of(report)
    assert case['fail_phase'] == 'setup'
    assert (
        'imb_benchmarks: Allreduce; choose from PingPong, PingPing'
        in (case['fail_reason'])
    )


# -- the real suites -----------------------------------------------------


def real_prefix(suite):
    prefix = os.environ.get(f'CLUSTERBENCH_{suite}_PREFIX')
    if not prefix:
        pytest.skip(f'CLUSTERBENCH_{suite}_PREFIX not set: no installed {suite} to run')
    return prefix


def test_real_osu_runs_and_records_its_own_numbers(tmp_path):
    real_prefix('OSU')
    # Few iterations and sizes: this tests the check, not the machine.
    settings = ['osu_iterations=20', 'osu_warmup=5', 'osu_max_size=65536']
    rc, log, report = run(tmp_path, [OSU_P2P, 'OSUCollectiveCheck'], settings)
    assert rc == 0, log
    found = by_benchmark(report)
    assert set(found) == {
        'osu_latency',
        'osu_bw',
        'osu_bibw',
        'osu_mbw_mr',
        'osu_allreduce',
        'osu_bcast',
        'osu_barrier',
    }
    for bench, case in found.items():
        assert case['result'] == 'pass', case['fail_reason']
        figures = values(case)
        assert figures and all(v > 0 for v in figures.values())
        curve = osu.parse(read(os.path.join(case['outputdir'], 'rfm_job.out')))
        assert curve.name == bench
        assert case['curves'][bench]['rows'] == [list(r) for r in curve.rows()]
        assert len(case['rank_bindings']) == case['num_tasks']
    assert values(found['osu_barrier']).keys() == {'latency'}
    latency = found['osu_latency']
    curve = osu.parse(read(os.path.join(latency['outputdir'], 'rfm_job.out')))
    assert values(latency)['latency_8B'] == curve.at('latency', 8)


def test_real_imb_runs_and_records_its_own_numbers(tmp_path):
    real_prefix('IMB')
    settings = ['imb_iterations=100', 'imb_max_log2=16']
    rc, log, report = run(tmp_path, [IMB_P2P, 'IMBCollective'], settings)
    assert rc == 0, log
    (p2p,) = cases_of(report, 'IMBPointToPoint')
    (coll,) = cases_of(report, 'IMBCollective')
    for case, names in (
        (p2p, ('PingPong', 'PingPing', 'Sendrecv', 'Exchange')),
        (coll, ('Bcast', 'Reduce', 'Allreduce', 'Alltoall', 'Barrier')),
    ):
        assert case['result'] == 'pass', case['fail_reason']
        text = read(os.path.join(case['outputdir'], 'rfm_job.out'))
        found = imb.verify(
            text, benchmarks=names, processes=case['num_tasks'], max_size=1 << 16
        )
        assert set(case['curves']) == set(names) == set(found)
    text = read(os.path.join(p2p['outputdir'], 'rfm_job.out'))
    pingpong = imb.verify(text, benchmarks=['PingPong'], processes=2)['PingPong']
    figures = values(p2p)
    assert figures['pingpong_latency_8B'] == pingpong.at('latency', 8)
    assert figures['pingpong_bandwidth_peak'] == max(pingpong.values('bandwidth'))

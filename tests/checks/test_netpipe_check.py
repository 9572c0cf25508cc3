"""NetPIPE run for real (NPopenmpi) through ReFrame on ``local``, short sweeps."""

import json
import os
import re
import subprocess

import pytest
from conftest import PROJECT
from rfm import reframe, tool

from clusterbench.bench import curves
from clusterbench.parsers import netpipe

pytestmark = pytest.mark.integration

# Up to 64 KiB, 50 repetitions a trial: a few seconds per mode.
SHORT = ('-S', 'netpipe_upper=65536', '-S', 'netpipe_repeats=50', '-p', 'gnu-openmpi')
CHECKS = 'reframe_checks/netpipe.py'
INTRA_PINGPONG = ('-n', 'NetPIPECheck%placement=intra%mode=pingpong')


def cases(report):
    return {
        (c['placement'], c['mode']): c
        for c in report['runs'][0]['testcases']
        if c['name'].startswith('NetPIPECheck')
    }


def values(case):
    return {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}


@pytest.fixture(scope='module')
def short_run(tmp_path_factory):
    prefix = tmp_path_factory.mktemp('netpipe')
    rc, out, report = reframe(prefix, *SHORT, checks=CHECKS)
    assert report is not None, out
    return rc, out, report


def test_both_modes_run_on_one_node_and_pass(short_run):
    rc, out, report = short_run
    assert rc == 0, out
    found = cases(report)
    for mode in ('pingpong', 'bidir'):
        case = found[('intra', mode)]
        assert case['result'] == 'pass', case['fail_reason']
        assert case['num_tasks'] == 2 and case['num_tasks_per_node'] == 2
        assert case['executable'] == 'NPopenmpi'
        assert case['executable_opts'][:6] == ['-o', 'np.out', '-u', '65536', '-p', '0']
    assert '-2' in found[('intra', 'bidir')]['executable_opts']


def test_the_inter_node_variant_is_skipped_with_one_line_on_one_node(short_run):
    _, out, report = short_run
    skips = [line for line in out.splitlines() if '[     SKIP ]' in line]
    assert len(skips) == 2
    for line in skips:
        assert 'placement=inter' in line
        assert line.endswith(
            '[local:default has one node: the inter-node variant '
            'needs two (placement=intra runs)]'
        )
    for mode in ('pingpong', 'bidir'):
        case = cases(report)[('inter', mode)]
        assert case['result'] == 'skip'
        assert 'has one node' in case['skip_reason']
    assert 'Traceback' not in out


def test_figures_come_from_the_kept_curve(short_run):
    _, _, report = short_run
    for mode, expected in (
        ('pingpong', {'latency_1B', 'latency_8B', 'bandwidth_peak', 'n_half'}),
        ('bidir', {'bandwidth_peak', 'n_half'}),
    ):
        case = cases(report)[('intra', mode)]
        figures = values(case)
        # The sweep stops at 64 KiB: no 1 MiB figure, and no efficiency.
        assert set(figures) == expected
        assert case['efficiency_note'] == 'intra-node run: the link is not used'
        (path,) = case['curve_files']
        assert os.path.basename(path) == 'curve_netpipe.csv'
        kept = curves.read_csv(path, 'netpipe')
        assert kept.sizes[0] == 1 and kept.sizes[-1] == 65536
        # The CSV, the run report and NetPIPE's own file hold the same curve.
        outdir = os.path.dirname(path)
        with open(os.path.join(outdir, 'np.out')) as f:
            raw = netpipe.parse(f.read(), bidirectional=(mode == 'bidir'))
        assert kept.sizes == raw.sizes
        assert kept.values('bandwidth') == pytest.approx(raw.values('bandwidth'))
        assert case['curves']['netpipe']['rows'] == [list(r) for r in raw.rows()]
        again = curves.bandwidth_figures(raw, 'bandwidth')
        assert figures['bandwidth_peak'] == pytest.approx(again['bandwidth_peak'][0])
        assert figures['n_half'] == pytest.approx(again['n_half'][0])
        if mode == 'pingpong':
            assert figures['latency_1B'] == raw.at('latency', 1)
            assert figures['latency_8B'] == raw.at('latency', 8)
        assert all(v > 0 for v in figures.values())


def test_pinning_placement_and_statistic_are_recorded(short_run):
    _, out, report = short_run
    case = cases(report)[('intra', 'pingpong')]
    assert case['pinning'] == [
        '--map-by',
        'ppr:2:node',
        '--bind-to',
        'core',
        '--report-bindings',
    ]
    bindings = case['rank_bindings']
    assert len(bindings) == 2
    assert all(re.search(r'MCW rank [01] bound to', b) for b in bindings)
    assert case['statistic'].startswith('NetPIPE: per size, the lowest of 3 trials')
    assert '50 repetitions' in case['statistic']
    with open(os.path.join(case['outputdir'], 'rfm_job.sh')) as f:
        assert '--bind-to core' in f.read()
    # The same facts are logged with the run.
    assert re.search(
        r'NetPIPECheck %placement=intra %mode=pingpong: 1 curve\(s\) '
        r'kept.*pinning: --map-by ppr:2:node',
        out,
    )


# -- a partition that declares its link ----------------------------------

CONFIG = """\
import runpy

site_configuration = runpy.run_path({local!r})['site_configuration']
partition = site_configuration['systems'][0]['partitions'][0]
partition['extras'] = {{
    **partition['extras'],
    'num_nodes': 2,
    'link': {{'rate_gbps': 10, 'encoding': '8b10b', 'width': 4}},
    'pcie': {{'gen': 1, 'lanes': 8}},
}}
"""


def run_with_config(prefix, config, *args):
    report = os.path.join(prefix, 'report.json')
    cmd = [
        tool('reframe'),
        '-C',
        str(config),
        '-c',
        os.path.join(PROJECT, CHECKS),
        '--prefix',
        str(prefix),
        '--report-file',
        report,
        '--nocolor',
        *args,
        '-r',
    ]
    env = {**os.environ, 'RFM_SQLITE_DB_FILE': os.path.join(prefix, 'results.db')}
    proc = subprocess.run(
        cmd, capture_output=True, text=True, cwd=PROJECT, env=env, timeout=300
    )
    with open(report) as f:
        return proc.returncode, proc.stdout + proc.stderr, json.load(f)


def test_a_declared_link_peak_gives_the_efficiencies(tmp_path):
    config = tmp_path / 'declared.py'
    local = os.path.join(PROJECT, 'site_configs', 'local.py')
    config.write_text(CONFIG.format(local=local))
    # "Two nodes" that are this one: the ranks are left unpinned so that
    # both fit, and the figures are a test of the arithmetic, not of a link.
    rc, out, report = run_with_config(
        tmp_path,
        config,
        *SHORT,
        '-n',
        'NetPIPECheck%placement=inter',
        '-S',
        'pin_ranks=none',
    )
    assert rc == 0, out
    found = cases(report)
    for mode, name, factor in (
        ('pingpong', 'link_efficiency', 1),
        ('bidir', 'link_efficiency_bidir', 2),
    ):
        case = found[('inter', mode)]
        assert case['result'] == 'pass', case['fail_reason']
        figures = values(case)
        # 4x SDR through PCIe gen 1 x8: 1000 MB/s each way.
        assert figures[name] == pytest.approx(
            100 * figures['bandwidth_peak'] / (1000.0 * factor)
        )
        assert case['link_peak']['peak_mbs'] == pytest.approx(1000.0)
        assert case['link_peak']['limited_by'] == 'link'
        assert case['efficiency_note'] == ''
        assert case['pinning'] == []
    assert found[('inter', 'pingpong')]['link_peak']['how'] == (
        'link 4x 10 Gb/s 8b10b = 1000 MB/s; slot PCIe gen1 x8 = 2000 MB/s; '
        'peak 1000 MB/s (link)'
    )


# -- runs that must not give a figure ------------------------------------

STAND_IN = """\
#!/bin/sh
# Stands in for NPopenmpi: rank 0 writes {source} as np.out.
[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] || exit 0
cp '{source}' np.out
"""


@pytest.mark.parametrize(
    'source, reason',
    [
        # Ends at 99 bytes, and NetPIPE's transcript lists none of its sizes.
        (
            ('netpipe', 'np.openmpi.tcp-2namespaces.out'),
            "np.out: 25 sizes in the file, 0 in NetPIPE's transcript",
        ),
        # Another suite's output under NetPIPE's name.
        (('osu', 'osu_bw.out'), 'np.out:2: expected "bytes Mbps seconds"'),
    ],
)
def test_a_truncated_or_foreign_output_is_a_sanity_failure(
    tmp_path, fixtures_dir, source, reason
):
    fake = tmp_path / 'NPfake'
    fake.write_text(STAND_IN.format(source=os.path.join(fixtures_dir, *source)))
    fake.chmod(0o755)
    rc, out, report = reframe(
        tmp_path,
        *SHORT,
        *INTRA_PINGPONG,
        '-S',
        f'netpipe_executable={fake}',
        checks=CHECKS,
    )
    assert rc != 0
    case = cases(report)[('intra', 'pingpong')]
    assert case['fail_phase'] == 'sanity'
    assert reason in case['fail_reason']
    assert all(v[0] is None for v in case['perfvalues'].values())
    assert not case['curves']


@pytest.mark.parametrize(
    'executable, reason',
    [
        ('false', 'NetPIPE exited with code 1 (see rfm_job.err)'),
        ('true', 'np.out: not written by the run (see rfm_job.err)'),
    ],
)
def test_a_failed_or_silent_run_is_a_sanity_failure(tmp_path, executable, reason):
    rc, out, report = reframe(
        tmp_path,
        *SHORT,
        *INTRA_PINGPONG,
        '-S',
        f'netpipe_executable={executable}',
        checks=CHECKS,
    )
    assert rc != 0
    case = cases(report)[('intra', 'pingpong')]
    assert case['fail_phase'] == 'sanity'
    assert reason in case['fail_reason']


def test_an_upper_bound_that_is_not_a_power_of_two_is_refused(tmp_path):
    rc, out, report = reframe(
        tmp_path,
        *INTRA_PINGPONG,
        '-p',
        'gnu-openmpi',
        '-S',
        'netpipe_upper=60000',
        checks=CHECKS,
    )
    assert rc != 0
    case = cases(report)[('intra', 'pingpong')]
    assert case['fail_phase'] == 'setup'
    assert 'netpipe_upper=60000: must be a power of two' in case['fail_reason']

"""The HPCC check run for real through ReFrame on ``local`` (tiny HPL)."""

import csv
import io
import os
import re

import pytest
import verdicttable
from rfm import CONFIG, clusterbench, only_case, reframe

from clusterbench.checks.plugins.energy import FIGURES as ENERGY
from clusterbench.parsers import hpcc
from clusterbench.testcluster.testing import run_reframe

pytestmark = pytest.mark.integration

TINY = ('-n', '^HPCCCheck$', '-S', 'hpl_n=1152', '-S', 'hpl_nb=96')

# References of our own, in a prefix ReFrame reads instead of reference_data/
# (in its directory of the system, local/):
# hpl gets a range nothing can miss, mpifft one nothing can meet, and every
# other figure none at all.
REFS = """\
HPCCCheck:
  $index: [$partition, $environ]
  'local:default':
    gnu-openmpi:
      hpl: [1.0e-6, -1.0, 1.0e+9, 'GFlop/s']
      mpifft: [1.0e+6, -0.01, 0.01, 'GFlop/s']
"""


@pytest.fixture(scope='module')
def judged_run(tmp_path_factory):
    refs = tmp_path_factory.mktemp('refs')
    (refs / 'local').mkdir()
    (refs / 'local' / 'hpcc.yaml').write_text(REFS)
    prefix = tmp_path_factory.mktemp('hpcc')
    rc, out, report = reframe(prefix, *TINY, env={'RFM_REFERENCE_PREFIX': str(refs)})
    assert report is not None, out
    return rc, out, report, prefix


def test_hpcc_verifies_and_records_every_figure(judged_run):
    _, out, report, prefix = judged_run
    case = only_case(report)
    assert case['environ'] == 'gnu-openmpi'
    # The run got through sanity: only the reference we made impossible failed.
    assert case['fail_phase'] == 'performance', case['fail_reason']
    assert case['num_tasks'] == max(os.cpu_count(), 2)
    values = {k.rsplit(':', 1)[1]: v for k, v in case['perfvalues'].items()}
    assert len(values) >= 24  # + energy figures where a node exposes them
    assert all(v[0] > 0 for v in values.values())
    # ReFrame keeps a failed test's files in its stage directory.
    outdir = case['stagedir']
    with open(os.path.join(outdir, 'hpccoutf.txt')) as f:
        text = f.read()
    assert re.search(r'^HPL_N=1152$', text, re.M)
    assert re.search(rf'^CommWorldProcs={case["num_tasks"]}$', text, re.M)
    with open(os.path.join(outdir, 'hpccinf.txt')) as f:
        assert re.search(r'^96\s+NBs', f.read(), re.M)
    assert values['hpl'][0] == pytest.approx(
        1000 * float(re.search(r'^HPL_Tflops=(\S+)$', text, re.M).group(1))
    )


def test_plain_reframe_and_compare_agree_on_verdicts(judged_run):
    rc, out, report, prefix = judged_run
    assert rc != 0, 'ReFrame should fail the test on the unmeetable mpifft reference'
    case = only_case(report)
    reframe_verdicts = {
        k.rsplit(':', 1)[1]: v[5] for k, v in case['perfvalues'].items()
    }
    assert reframe_verdicts['hpl'] == 'pass'
    assert reframe_verdicts['mpifft'] == 'fail'

    result = clusterbench('compare', os.path.join(prefix, 'report.json'), '-v')
    # The unmeetable mpifft reference is a figure too slow: SLOWER, exit 1.
    assert result.returncode == 1, result.stderr
    # "references: ...", then the table.
    assert result.stdout.startswith('references: as recorded in the report')
    verdicts = {r['variable']: r['verdict'] for r in verdicttable.rows(result.stdout)}
    assert verdicts['hpl'] == 'pass'
    assert verdicts['mpifft'] == 'SLOWER'
    assert verdicts['dgemm_star'] == 'no reference'
    # Every HPCC figure and the HPL/DGEMM efficiency, plus energy figures
    # where the node exposes them (none of them has a reference here).
    assert set(verdicts) - set(ENERGY) == {
        *(figure.name for figure, _ in hpcc.FIGURES.values()),
        'hpl_dgemm_efficiency',
    }
    unreferenced = len(verdicts) - 2
    assert f'1 pass, 1 SLOWER, {unreferenced} no reference, 0 FAILED' in result.stdout


def test_hpcc_is_only_offered_where_the_binary_is(tmp_path):
    rc, out, _ = reframe(tmp_path, '-n', '^HPCCCheck$', '-p', 'gnu-mpich')
    assert 'Ran 0/0 test case' in out or 'Found 0 check' in out, out


def test_a_crashing_benchmark_records_no_figure(tmp_path):
    rc, out, report = reframe(tmp_path, *TINY, '-S', 'executable=false')
    assert rc != 0
    case = only_case(report)
    assert case['fail_phase'] == 'sanity'
    assert 'hpcc exited with code 1 (see rfm_job.err)' in case['fail_reason']
    assert all(v[0] is None for v in case['perfvalues'].values())
    result = clusterbench('compare', os.path.join(tmp_path, 'report.json'))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    row = [line for line in lines if line.startswith('HPCCCheck  ')]
    assert len(row) == 1 and row[0].endswith('FAILED (sanity)')
    # The reason in full below the table.
    assert any(
        line.startswith('  HPCCCheck on local:default with gnu-openmpi: ')
        and 'FAILED (sanity): hpcc exited with code 1' in line
        for line in lines
    ), result.stdout


def test_a_missing_binary_is_named(tmp_path):
    rc, out, report = reframe(tmp_path, *TINY, '-S', 'executable=hpcc-not-here')
    assert rc != 0
    case = only_case(report)
    assert case['fail_phase'] == 'sanity'
    assert 'hpcc not found on the nodes' in case['fail_reason']


LINKED_CONFIG = """\
import runpy
site = runpy.run_path({local!r})['site_configuration']
part = site['systems'][0]['partitions'][0]
part['extras'] = {{**part['extras'], 'link_peak_mbs': 1000.0}}
site_configuration = site
"""


def test_a_declared_link_gets_the_pingpong_efficiency_across_nodes(tmp_path):
    config = tmp_path / 'linked.py'
    config.write_text(LINKED_CONFIG.format(local=CONFIG))
    prefix = tmp_path / 'run'
    rc, out, report = run_reframe(
        str(config),
        prefix,
        *TINY,
        '-S',
        'num_nodes=2',  # two "nodes" of this host: four ranks
        checks=['reframe_checks'],
        # Judged by no references: tiny HPL sizes are far below them.
        env={
            'RFM_SQLITE_DB_FILE': str(prefix / 'results.db'),
            'RFM_REFERENCE_PREFIX': str(tmp_path),
        },
    )
    case = only_case(report)
    assert case['result'] == 'pass', out
    values = {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}
    assert values['pingpong_link_efficiency'] == pytest.approx(
        100.0 * values['pingpong_bandwidth_min'] * 1000.0 / 1000.0, rel=1e-6
    )
    assert case['link_peak']['peak_mbs'] == 1000.0

    # One node: no pair crosses a link, and the report says so.
    rc, out, report = reframe(tmp_path / 'one', *TINY)
    case = only_case(report)
    assert 'pingpong_link_efficiency' not in str(case['perfvalues'])
    assert case['efficiency_note'].startswith('one node:')


def test_replay_rejudges_a_flagged_test_from_its_stage_directory(judged_run, tmp_path):
    # ReFrame left the FLAGGED test's files in its stage directory (under the
    # session prefix) and an empty output directory: replay reads the former.
    _, _, report, prefix = judged_run
    case = only_case(report)
    assert not os.listdir(case['outputdir'])
    refs = tmp_path / 'refs'
    (refs / 'local').mkdir(parents=True)
    (refs / 'local' / 'hpcc.yaml').write_text(REFS)
    result = clusterbench(
        'replay', '--format', 'csv', str(prefix), '--references', str(refs)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    verdicts = {
        row['variable']: row['verdict']
        for row in csv.DictReader(io.StringIO(result.stdout))
    }
    assert not any(v.startswith('FAILED') for v in verdicts.values())
    assert verdicts['hpl'] == 'pass' and verdicts['mpifft'] == 'SLOWER'
    # A band the stored figure meets: the same output now passes.
    (refs / 'local' / 'hpcc.yaml').write_text(
        REFS.replace('[1.0e+6, -0.01, 0.01,', '[1.0, -1.0, 1.0e+6,')
    )
    result = clusterbench('replay', str(prefix), '--references', str(refs))
    assert result.returncode == 0, result.stdout + result.stderr

"""`clusterbench report` on real runs: HPCC and the CG solver through ReFrame.

One ReFrame session per test session (tiny sizes: HPCC with N=960, the CG
solver's class S with both MPI environments) feeds these tests and the
browser test in test_report_e2e.py (see :func:`real_runs`).
"""

import csv
import io
import os
import re

import pytest
from rfm import reframe

from clusterbench.report import assemble, render

pytestmark = pytest.mark.integration

RFM_ARGS = (
    '-n',
    'HPCCCheck|CGSolverCheck%stencil=7',
    '-S',
    'CGSolverCheck.problem_class=S',
    '-S',
    'HPCCCheck.hpl_n=960',
    '-S',
    'HPCCCheck.hpl_nb=96',
)

_CACHE = {}


def real_runs(tmp_path_factory):
    """(prefix, report path, report) of the one real session (run once)."""
    if 'runs' not in _CACHE:
        prefix = tmp_path_factory.mktemp('report-runs')
        rc, out, report = reframe(prefix, *RFM_ARGS)
        assert report is not None, out
        assert rc == 0, out
        _CACHE['runs'] = (str(prefix), os.path.join(prefix, 'report.json'), report)
    return _CACHE['runs']


@pytest.fixture(scope='session')
def runs(tmp_path_factory):
    return real_runs(tmp_path_factory)


@pytest.fixture(scope='session')
def data(runs):
    _, path, _ = runs
    return assemble.assemble(assemble.load_reports([path]))


def bench(data, test_prefix, variable):
    return next(
        b
        for b in data.benchmarks
        if b.test.startswith(test_prefix) and b.variable == variable
    )


def test_each_mpi_environment_is_a_labelled_configuration(data):
    labels = {c.environ: c for c in data.configs}
    assert set(labels) == {'gnu-openmpi', 'gnu-mpich'}
    for environ, config in labels.items():
        assert (config.system, config.partition, config.nodes) == (
            'local',
            'default',
            1,
        )
        assert config.mpi == environ.split('-')[1]
        assert config.compiler == 'gcc'
        assert f'MPI {config.mpi}' in config.label
        assert config.label.endswith('1 node')
        # The environment's extras name its stack (compiler, BLAS) in the label.
        assert config.short == f'local/default {environ} gcc openblas 1n'
        assert config.hosts and config.processor.get('num_cpus')


def test_cg_figures_on_both_and_hpcc_missing_not_zero_on_mpich(data, runs):
    _, _, report = runs
    cases = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    measured = {
        (c['name'], c['environ']): c['perfvalues']['local:default:gflops'][0]
        for c in cases
        if c['name'].startswith('CGSolverCheck')
    }
    name = 'CGSolverCheck %stencil=7 %variant=classic %ranks_per_node=1'
    gflops = bench(data, name, 'gflops')
    # -S problem_class=S is not in ReFrame's name; the check's reference
    # index makes it part of the figure (class S is not class B).
    assert gflops.test == f'{name} %problem_class=S'
    for cell in data.row(gflops):
        assert cell.values == [measured[(name, cell.config.environ)]]
        assert cell.state == 'no reference'
    hpl = bench(data, 'HPCCCheck', 'hpl')
    # HPL's N is in HPCC's reference index: an HPL of another size is
    # another figure.
    assert hpl.test == 'HPCCCheck %hpl_order=960'
    by_env = {c.config.environ: c for c in data.row(hpl)}
    assert by_env['gnu-openmpi'].value > 0
    missing = by_env['gnu-mpich']
    assert missing.state == 'missing' and missing.value is None and not missing.values
    # The CSV of the summary says so too: an empty value, never 0.
    rows = list(csv.DictReader(io.StringIO(render.summary_csv(data))))
    row = next(
        r
        for r in rows
        if r['test'] == hpl.test
        and r['variable'] == 'hpl'
        and r['label'] == missing.config.label
    )
    assert row['value'] == '' and row['verdict'] == 'missing'


def test_best_configuration_is_the_better_value(data):
    for b in data.benchmarks:
        cells = [c for c in data.row(b) if c.value is not None]
        best = [c for c in cells if c.best]
        if b.better is None or len(cells) < 2:
            assert not best
            continue
        assert len(best) == 1
        pick = max if b.better == 'higher' else min
        assert best[0].value == pick(c.value for c in cells)


def test_scaling_series_from_ranks_per_node_1_and_all(data):
    series = [s for s in data.scaling_series if s.test.startswith('CGSolverCheck')]
    assert {s.series for s in series} == {
        'local:default gnu-openmpi',
        'local:default gnu-mpich',
    }
    for s in series:
        ranks = [p.ranks for p in s.points]
        assert ranks == [1, 2]
        one, two = s.points
        assert one.speedup == 1.0
        assert two.speedup == pytest.approx(two.value / one.value)
        assert two.efficiency == pytest.approx(two.speedup / 2)


def test_sections_without_data_say_why(data):
    assert data.sensitivity.empty
    assert 'needs 3 or more configurations' in data.sensitivity.reason
    acc = data.acceptance
    assert acc.empty and not acc.nodes and not acc.pairs
    assert 'two or more nodes' in acc.nodes_reason
    comm = data.communication
    # HPCC's PingPong figures fill the latency table of the one environment
    # that runs HPCC; there are no message-size curves in this session.
    assert not comm.lines
    assert [r.source for r in comm.table] == ['HPCC']
    assert comm.table[0].config.environ == 'gnu-openmpi'
    assert comm.table[0].efficiency is None


def test_the_results_database_gives_the_same_report(runs, monkeypatch):
    prefix, path, _ = runs
    monkeypatch.setenv('RFM_SQLITE_DB_FILE', os.path.join(prefix, 'results.db'))
    stored = assemble.load_history('now-1d:now', 'site_configs/local.py')
    from_db = assemble.assemble(stored)
    from_file = assemble.assemble(assemble.load_reports([path]))

    def values(d):
        return {
            (c.config.short, b.test, b.variable): c.values
            for b in d.benchmarks
            for c in d.row(b)
        }

    assert values(from_db) == values(from_file)
    # The same session from the file and from the database counts once.
    both = assemble.assemble(assemble.load_reports([path]) + stored)
    assert values(both) == values(from_file)


def test_written_report_is_self_contained_with_a_csv_per_plot(data, tmp_path):
    html_path, data_dir, plots, _ = render.write(data, tmp_path / 'r.html')
    html = open(html_path, encoding='utf-8').read()
    assert plots
    for plot in plots:
        assert os.path.isfile(os.path.join(data_dir, plot.csv_name))
        assert f'r-data/{plot.csv_name}' in html
        assert plot.svg.startswith(b'<?xml') and b'<path' in plot.svg
    assert os.path.isfile(os.path.join(data_dir, 'summary.csv'))
    # Nothing is fetched from anywhere: no remote URL in any src/href.
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert '<script' not in html.lower()
    for section in ('summary', 'applications', 'communication', 'scaling'):
        assert f'id="{section}"' in html

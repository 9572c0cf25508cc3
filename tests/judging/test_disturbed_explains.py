"""DISTURBED never hides what it cannot explain: a figure beyond its band by
more than the run's measured disturbance can account for (the ranks' CPU
share, steal, other processes, the host probe's drop) is still judged, and
the verdict names both numbers (docs/verdicts.md, docs/noisy-host.md)."""

import json
import os
import re

import pytest
import rfm
from conftest import FIXTURES
from test_noisy_host import _local_config

from clusterbench.core.reference import Reference
from clusterbench.judging import disturbed, verdict
from clusterbench.results import runreport
from clusterbench.testcluster.testing import run_reframe

ZEN4 = os.path.join(FIXTURES, 'sessions', 'AMD-25-17', 'report.json')
SHARE = "ranks' CPU share 89.8 %"


def fig(value, ref, lower, upper, name='dgemm_single', unit='GFlop/s', why=SHARE):
    return runreport.Figure(
        'HPCCCheck', 'local', 'default', 'gnu-openmpi', name, value, unit,
        Reference(ref, lower, upper, unit), 'pass', disturbed=why,
    )  # fmt: skip


@pytest.mark.parametrize(
    'text, loss',
    [
        # A loss averaged over the ranks may fall on one that the others wait
        # for: counted twice.
        (SHARE, 0.204),
        ('steal 5 %', 0.10),
        ('other processes 30 % of the CPUs', 0.60),
        # The host probe's worst figure.
        ('host probe gather -18 %, copy -12 %', 0.36),
        # Each loss on the speed the others left.
        ("steal 5 %, ranks' CPU share 80 %", 1 - 0.9 * 0.6),
        # A probe of a newer release, in its own words: its drop.
        ("host memory bandwidth −36 % against its references' sessions", 0.72),
        ("ranks' CPU share 40 %", 1.0),
    ],
)
def test_the_disturbance_explains_at_most_twice_its_measured_loss(text, loss):
    assert disturbed.explained(text) == pytest.approx(loss)


@pytest.mark.parametrize('text', ['the moon was full', 'host probe absent', ''])
def test_a_disturbance_it_cannot_measure_explains_everything(text):
    assert disturbed.explained(text) is None


def test_a_figure_far_below_what_the_disturbance_explains_is_judged():
    # OpenBLAS on its generic kernel under load: 19.1 GF/s against 55.0 +-9 %.
    (judged,) = verdict.group([fig(19.1, 55.0, -0.09, 0.09)])
    assert judged.verdict == verdict.Verdict(
        verdict.SLOWER,
        f'-62 % beyond its band; the disturbance ({SHARE}) explains at most -20 %',
    )
    # The floor (50.05) less what the disturbance explains (20.4 %): 39.8.
    (explained,) = verdict.group([fig(42.0, 55.0, -0.09, 0.09)])
    assert explained.verdict == verdict.Verdict(verdict.DISTURBED, SHARE)
    assert verdict.exit_code(verdict.rows([judged], [])) == verdict.EXIT_REGRESSION


def test_a_time_is_judged_against_the_slowdown_the_disturbance_explains():
    time = fig(30.0, 10.0, -0.1, 0.1, name='time', unit='s')
    (judged,) = verdict.group([time])
    assert judged.verdict == verdict.Verdict(
        verdict.SLOWER,
        f'+173 % beyond its band; the disturbance ({SHARE}) explains at most +26 %',
    )
    # 11 s * 1.26 = 13.8 s: explained.
    (explained,) = verdict.group([fig(13.5, 10.0, -0.1, 0.1, name='time', unit='s')])
    assert explained.kind == verdict.DISTURBED


@pytest.mark.parametrize(
    'figure',
    [
        # No better direction: how a disturbance moves it is not known.
        fig(30.0, 100.0, -0.1, 0.1, name='iterations', unit='iterations'),
        # A share near zero: waiting for a descheduled rank is MPI time.
        fig(40.0, 2.0, -0.5, 0.5, name='mpi_share', unit='%'),
        # A band open to zero: nothing is beyond it on the bad side.
        fig(1.0, 100.0, -1.0, 1.0),
        # Not beyond its band at all.
        fig(54.0, 55.0, -0.09, 0.09),
        # A disturbance that may have taken everything.
        fig(1.0, 55.0, -0.09, 0.09, why="ranks' CPU share 40 %"),
        fig(1.0, 55.0, -0.09, 0.09, why='the moon was full'),
    ],
)
def test_what_the_disturbance_may_explain_stays_disturbed(figure):
    (judged,) = verdict.group([figure])
    assert judged.verdict == verdict.Verdict(verdict.DISTURBED, figure.disturbed)


def test_the_perflog_verdict_follows_the_same_rule():
    kept = {'local:default:dgemm_single': [19.1, 55.0, -0.09, 0.09, 'GFlop/s', 'fail']}
    dropped = {'local:default:stream_star_copy': [14.0, 0, None, None, 'GB/s', None]}
    found = verdict.of_test_case({**kept, **dropped}, SHARE)
    assert found == verdict.Verdict(verdict.SLOWER, 'dgemm_single')
    assert verdict.of_test_case(dropped, SHARE) == verdict.Verdict(
        verdict.DISTURBED, SHARE
    )


def _disturbed_zen4(tmp_path, test, **values):
    """The stored Zen 4 session with *test*'s case DISTURBED by a ranks' CPU
    share of 89.8 %, its figures set to *values*, as the check records a
    disturbed run: the references dropped, but for the figures the
    disturbance cannot explain (kept by the check, see runconditions)."""
    with open(ZEN4) as f:
        data = json.load(f)
    (case,) = [
        c
        for c in runreport.cases(data)
        if c['name'] == test and c['environ'] == 'gnu-openmpi' and not c['fixture']
    ]
    case['disturbed'] = SHARE
    case['run_conditions'] = {**case['run_conditions'], 'disturbed': SHARE}
    for key, entry in case['perfvalues'].items():
        name = key.rsplit(':', 1)[1]
        if name in values:
            entry[0] = values[name]
        figure = runreport._figure(('t', 's', 'p', 'e'), key, entry, 0, ZEN4, SHARE)
        (judged,) = verdict.group([figure])
        if judged.kind == verdict.DISTURBED:
            entry[1:4] = [0, None, None]
    path = tmp_path / 'report.json'
    path.write_text(json.dumps(data))
    return path


def _rows(out, test, variable):
    return [
        line for line in out.splitlines() if line.startswith(test) and variable in line
    ]


def test_a_generic_blas_under_load_is_red_in_a_stored_session(tmp_path):
    # The issue's case: OpenBLAS's generic kernel, ranks' CPU share 0.898.
    # dgemm_single 19.1 GF/s (45.9 % of a core's 41.6 GF/s peak).
    path = _disturbed_zen4(tmp_path, 'HPCCCheck', dgemm_single=19.1)
    ran = rfm.clusterbench('compare', str(path))
    out = ran.stdout + ran.stderr
    assert ran.returncode == 1, out
    assert 'Traceback' not in out
    (row,) = _rows(out, 'HPCCCheck', 'dgemm_single ')
    # A verdict too long for its cell is a note, said whole below the table
    # (issue 41); JSON below keeps it whole too.
    assert row.rstrip().endswith('SLOWER [1]'), out
    assert "\n  [1] SLOWER (-62 % beyond its band; the disturbance (ranks' CPU" in out
    # What the share explains stays DISTURBED (StarSTREAM's -38 %): said once
    # for the check's figures of one reason, no row of its own (issue 41).
    assert "\n  1 test case, 26 figures DISTURBED: ranks' CPU share 89.8 %\n" in out
    assert not _rows(out, 'HPCCCheck', 'stream_star_co')
    # JSON keeps the whole detail.
    ran = rfm.clusterbench('compare', '--format', 'json', str(path))
    rows = [
        r
        for r in json.loads(ran.stdout)
        if r['variable'] == 'dgemm_single' and r['test'] == 'HPCCCheck'
    ]
    assert [r['verdict'] for r in rows] == [
        {
            'kind': 'SLOWER',
            'detail': f'-62 % beyond its band; the disturbance ({SHARE}) '
            'explains at most -20 %',
        }
    ]


def test_a_portable_figure_far_below_its_band_under_load_is_flagged(tmp_path):
    test = 'CGSolverCheck %stencil=27 %variant=pipelined %ranks_per_node=1'
    # An -O0 solver reads ~42 %; under load, 20 % (band 55..140 %).
    path = _disturbed_zen4(tmp_path, test, job_triad_efficiency=20.0)
    ran = rfm.clusterbench('compare', '--format', 'json', str(path))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = [
        r
        for r in json.loads(ran.stdout)
        if r['variable'] == 'job_triad_efficiency'
        and r['test'] == test
        and r['environment'] == 'gnu-openmpi'
    ]
    # (Against the band's floor, whichever band the declaration gives.)
    beyond = round(100 * (20.0 / rows[0]['allowed_low'] - 1))
    assert [r['verdict'] for r in rows] == [
        {
            'kind': 'FLAGGED',
            'detail': f'{beyond} % beyond its band; the disturbance ({SHARE}) '
            'explains at most -20 %',
        }
    ]
    # 50 %: below the floor by less than the disturbance explains.
    path = _disturbed_zen4(tmp_path, test, job_triad_efficiency=50.0)
    ran = rfm.clusterbench('compare', '--format', 'json', str(path))
    rows = [
        r
        for r in json.loads(ran.stdout)
        if r['variable'] == 'job_triad_efficiency'
        and r['test'] == test
        and r['environment'] == 'gnu-openmpi'
    ]
    assert [r['verdict']['kind'] for r in rows] == ['DISTURBED']


@pytest.mark.integration
def test_a_real_disturbed_run_keeps_and_judges_what_it_cannot_explain(tmp_path):
    # Every run DISTURBED by its steal alone (a ceiling every run breaks,
    # with what it measured: about 0 %; the other processes of a busy machine
    # are let be), and a time no run makes: the check keeps that reference
    # unless the steal measured explains everything, and compare says the
    # same.
    config = _local_config(
        tmp_path,
        "{'max_steal': -1.0, 'max_other_cpu': 1.0, 'min_ranks_cpu_share': 0.0, "
        "'max_host_drift': None}",
    )
    refs = tmp_path / 'refs'
    rfm.classic_cg_references(refs, time=[1e-6, -0.1, 0.1, 's'])
    rc, out, report = run_reframe(
        str(config), str(tmp_path), *rfm.TINY_CG,
        checks=[rfm.CG_CHECKS],
        env={'RFM_REFERENCE_PREFIX': str(refs),
             'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
             'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs')},
        timeout=900,
    )  # fmt: skip
    assert report is not None, out
    (run,) = report['runs']
    (case,) = [c for c in run['testcases'] if not c['fixture']]
    assert re.fullmatch(r'steal [\d.]+ %', case['disturbed']), case['run_conditions']
    time = case['perfvalues']['local:default:time']
    loss = disturbed.explained(case['disturbed'])
    judged = loss is not None and loss < 1 and time[0] > 1.1e-6 / (1 - loss)
    compare = rfm.clusterbench(
        'compare', '--format', 'json', str(tmp_path / 'report.json')
    )
    (row,) = [r for r in json.loads(compare.stdout) if r['variable'] == 'time']
    if judged:
        # Kept: plain ReFrame fails it too.
        assert time[1:4] == [1e-6, -0.1, 0.1], time
        assert case['result'] == 'fail' and case['fail_phase'] == 'performance'
        assert row['verdict']['kind'] == 'SLOWER', row
        assert (
            f'the disturbance ({case["disturbed"]}) explains at most'
            in (row['verdict']['detail'])
        )
        assert compare.returncode == 1
    else:
        assert time[1:4] == [0, None, None], time
        assert row['verdict'] == {'kind': 'DISTURBED', 'detail': case['disturbed']}
    # The figures it had no reference for stay DISTURBED.
    others = [r for r in json.loads(compare.stdout) if r['variable'] == 'gflops']
    assert [r['verdict']['kind'] for r in others] == ['DISTURBED']


@pytest.mark.integration
def test_a_portable_figure_of_confirmed_runs_is_one_row(tmp_path):
    # The issue's "one figure, two rows": the confirmation runs' samples of a
    # recorded portable figure (the CG solver's job_triad_efficiency, class
    # B) were a `no reference` row beside the first run's banded one. A time
    # no run makes makes the test case red, so it is confirmed. (The
    # conditions are not judged: on a busy machine they would explain it.)
    refs = tmp_path / 'refs'
    rfm.classic_cg_references(refs, time=[1e-6, -0.1, 0.1, 's'])
    (tmp_path / 'locks').mkdir()
    ran = rfm.clusterbench(
        'run', '--format', 'json', '--results', str(tmp_path / 'results'),
        '--references', str(refs), '--confirm', '1', '--checks', rfm.CG_CHECKS,
        '--', *rfm.TINY_CG[:4], '-S', 'problem_class=B',
        '-S', 'judge_conditions=false', '-S', 'probe_host=false',
        env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
             'CLUSTERBENCH_LOCK_DIR': str(tmp_path / 'locks')},
    )  # fmt: skip
    out = ran.stdout + ran.stderr
    assert 'Traceback' not in out
    assert '/confirm/' in out, out[-3000:]
    rows = [
        r for r in json.loads(ran.stdout) if r['variable'] == 'job_triad_efficiency'
    ]
    assert len(rows) == 1, rows
    (row,) = rows
    assert row['n'] == 2 and row['reference'] is None, row
    assert row['allowed_low'] < row['allowed_high'], row

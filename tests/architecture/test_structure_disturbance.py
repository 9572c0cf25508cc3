"""A disturbance is data: what a run broke is recorded as its kind, the value
measured and the limit broken (``run_conditions.disturbance`` of the run
report), and every text that names it is derived from that record. Sessions
recorded before the record existed hold the words alone and still read the
same (issue 42)."""

import json
import os
import re

import pytest
import rfm
from conftest import PROJECT
from test_noisy_host import _local_config

from clusterbench.core.disturbance import Disturbance, Disturbed, Kind, from_text
from clusterbench.judging import disturbed
from clusterbench.noisyhost import conditions, hostprobe
from clusterbench.results import runreport
from clusterbench.testcluster.testing import run_reframe

#: A real session, recorded before the record existed: its NetPIPE case holds
#: the words alone.
OLD = os.path.join(PROJECT, 'tests', 'data', 'sessions', 'Intel-6-207', 'report.json')
WORDS = "steal 3 %, ranks' CPU share 81 %, other processes 13 % of the CPUs"
CASE = 'NetPIPECheck %placement=intra %mode=bidir'
#: The same disturbance as this release records it.
RECORD = [
    {'kind': 'steal', 'measured': 0.0287, 'limit': 0.02},
    {'kind': "ranks' CPU share", 'measured': 0.81, 'limit': 0.9},
    {'kind': 'other processes', 'measured': 0.13, 'limit': 0.1},
]


def test_what_a_run_broke_is_its_kind_measured_value_and_limit():
    found = {'wall_s': 60.0, 'steal_share': 0.1834, 'ranks_cpu_share': 0.898}
    found['host_probe'] = {'dgemm_gflops': 35.0, 'gather_mups': 100.0,
                           'copy_gbs': 30.0, 'mem_gbs': 30.0, 'cores': 2}  # fmt: skip
    reference = {'dgemm_gflops': 50.0, 'gather_mups': 100.0, 'mem_gbs': 60.0,
                 'cores': 2}  # fmt: skip
    broke = conditions.judge_run(found, conditions.thresholds({}), lambda: reference)
    assert broke.parts == (
        Disturbance(Kind.STEAL, 0.1834, 0.02),
        Disturbance(Kind.RANKS_CPU_SHARE, 0.898, 0.9),
        Disturbance(Kind.HOST_PROBE, 0.7, 0.2, figure='dgemm'),
        Disturbance(Kind.HOST_MEMORY_BANDWIDTH, 0.5, 0.2, cores=2),
    )
    # The words, from the data alone.
    assert broke == (
        "steal 18 %, ranks' CPU share 89.8 %, host probe dgemm -30 %, "
        "host memory bandwidth -50 % against its references' sessions "
        '(2 cores streaming)'
    )
    assert str(Disturbed(broke.parts)) == broke
    # The record the check keeps in run_conditions reads back as the data.
    records = broke.records()
    assert records[2] == {
        'kind': 'host probe',
        'measured': 0.7,
        'limit': 0.2,
        'figure': 'dgemm',
    }
    case = {'disturbed': str(broke), 'run_conditions': {'disturbance': records}}
    assert disturbed.of_case(case).parts == broke.parts
    assert json.loads(json.dumps(records)) == records


def test_what_it_explains_comes_from_the_measured_value_not_the_words():
    # 5.49 % of steal is said "steal 5 %"; the loss is the 5.49 % measured.
    steal = Disturbed([Disturbance(Kind.STEAL, 0.0549, 0.02)])
    assert steal == 'steal 5 %'
    assert disturbed.explained(steal) == pytest.approx(2 * 0.0549)
    # The words of an old record give what they say.
    assert disturbed.explained('steal 5 %') == pytest.approx(0.10)
    probe = Disturbed([Disturbance(Kind.HOST_PROBE, 0.75, 0.2, figure='gather')])
    assert probe == 'host probe gather -25 %'
    assert disturbed.explained(probe) == pytest.approx(0.5)
    assert disturbed.kinds(probe) == {'host probe': 'host probe gather -25 %'}


def test_the_words_of_an_old_record_read_as_the_data_they_name():
    old = from_text(WORDS)
    assert old == WORDS
    assert [(p.kind, p.measured) for p in old.parts] == [
        (Kind.STEAL, 0.03),
        (Kind.RANKS_CPU_SHARE, 0.81),
        (Kind.OTHER_PROCESSES, 0.13),
    ]
    # A kind this release does not know is a kind of its own, said as it was.
    (moon,) = from_text('the moon was full').parts
    assert moon.kind is None and moon.name == 'the moon was full'


def _compare(path):
    ran = rfm.clusterbench('compare', '--format', 'json', str(path))
    assert 'Traceback' not in ran.stderr, ran.stderr
    return [r for r in json.loads(ran.stdout) if r['test'] == CASE]


def _session(tmp_path, name, edit):
    with open(OLD) as f:
        data = json.load(f)
    (case,) = [c for c in runreport.cases(data) if c.get('disturbed')]
    edit(case)
    path = tmp_path / name / 'report.json'
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    return path


def _as_recorded_now(case):
    # What this release writes: the record (and its words, which no reader
    # needs: here they are gone, so the verdict can only come from the data).
    del case['disturbed']
    conds = case['run_conditions']
    del conds['disturbed']
    conds['disturbance'] = RECORD


def test_an_old_session_and_a_recorded_one_read_the_same(tmp_path):
    old = _compare(OLD)
    assert old and {json.dumps(r['verdict']) for r in old} == {
        json.dumps({'kind': 'DISTURBED', 'detail': WORDS})
    }
    new = _compare(_session(tmp_path, 'new', _as_recorded_now))
    assert new == old
    # The person's table too, line for line.
    for verbose in ([], ['-v']):
        plain = [rfm.clusterbench('compare', *verbose, str(p)).stdout for p in
                 (OLD, tmp_path / 'new' / 'report.json')]  # fmt: skip
        said = f'DISTURBED ({WORDS})' if verbose else f'DISTURBED: {WORDS}'
        assert said in plain[0], plain[0]
        new = plain[1].replace(str(tmp_path / 'new' / 'report.json'), OLD)
        assert new == plain[0]


def test_trend_leaves_out_the_recorded_kinds_one_line_each(tmp_path):
    path = _session(tmp_path, 'new', _as_recorded_now)
    said = []
    for n, report in enumerate((OLD, path)):
        ran = rfm.clusterbench('trend', '-o', str(tmp_path / f't{n}'), 'NetPIPE',
                               str(report))  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        said.append([line for line in ran.stdout.splitlines() if 'DISTURBED' in line])
    assert said[0][:3] == [
        'left out 3 DISTURBED samples of 1 session: other processes '
        '(e.g. other processes 13 % of the CPUs)',
        "left out 3 DISTURBED samples of 1 session: ranks' CPU share "
        "(e.g. ranks' CPU share 81 %)",
        'left out 3 DISTURBED samples of 1 session: steal (e.g. steal 3 %)',
    ], said
    assert said[1] == said[0]


@pytest.mark.integration
def test_a_real_run_records_what_it_broke_and_says_it_in_those_words(tmp_path):
    # Steal is judged against a ceiling every run breaks; nothing else is.
    config = _local_config(
        tmp_path,
        "{'max_steal': -1.0, 'max_other_cpu': 1.0, 'min_ranks_cpu_share': 0.0, "
        "'max_host_drift': None}",
    )
    rc, out, report = run_reframe(
        str(config), str(tmp_path), *rfm.TINY_CG,
        checks=[rfm.CG_CHECKS],
        env={'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
             'RFM_REFERENCE_PREFIX': str(tmp_path / 'no-references'),
             'CLUSTERBENCH_PERFLOGDIR': str(tmp_path / 'perflogs')},
        timeout=900,
    )  # fmt: skip
    assert report is not None, out
    (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    conds = case['run_conditions']
    assert conds['disturbance'] == [
        {'kind': 'steal', 'measured': conds['steal_share'], 'limit': -1.0}
    ], conds
    said = str(Disturbed([Disturbance(Kind.STEAL, conds['steal_share'], -1.0)]))
    assert re.fullmatch(r'steal [\d.]+ %', said)
    assert case['disturbed'] == conds['disturbed'] == said
    assert f'DISTURBED ({said})' in ' '.join(out.split()), out
    rows = rfm.clusterbench(
        'compare', '--format', 'json', str(tmp_path / 'report.json')
    ).stdout
    kinds = {r['verdict']['kind'] for r in json.loads(rows)}
    details = {r['verdict']['detail'] for r in json.loads(rows)}
    assert kinds == {'DISTURBED'} and details == {said}, rows
    assert hostprobe.NAMES[hostprobe.MEMORY] is Kind.HOST_MEMORY_BANDWIDTH

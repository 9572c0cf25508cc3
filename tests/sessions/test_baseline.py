"""`clusterbench baseline`: references of a new system from several real
sessions, DISTURBED samples left out and named, a floor per kind of figure.

The end-to-end tests run the real command on the tiniest real run (the CG
solver, class S, one rank), three sessions into a temporary reference
directory, and then a normal `clusterbench run` judged against what it wrote.
"""

import copy
import json
import os
import re
import uuid as uuidlib

import pytest
from conftest import PROJECT
from rfm import CG_CHECKS, TINY_CG, captured, tool

from clusterbench.judging import disturbed
from clusterbench.references import floors
from clusterbench.references import provenance as refprov
from clusterbench.references import update as refupdate
from clusterbench.results import samples
from clusterbench.sessions import baseline

#: The options of every test session here: conditions measured but not
#: judged (a shared machine must not turn this test's runs DISTURBED).
QUIET = ('-S', 'judge_conditions=false', '-S', 'probe_host=false')
FIGURE = 'CGSolverCheck problem_class=S stencil=7 variant=classic ranks_per_node=1'


def command(tmp, *args):
    (tmp / 'locks').mkdir(exist_ok=True)
    env = {
        'RFM_SQLITE_DB_FILE': str(tmp / 'results.db'),
        'CLUSTERBENCH_LOCK_DIR': str(tmp / 'locks'),
        'CLUSTERBENCH_PERFLOGDIR': str(tmp / 'perflogs'),
        'RFM_REFERENCE_PREFIX': None,
    }
    return captured([tool('clusterbench'), *args], env=env, cwd=PROJECT, timeout=1800)


# -- the rule for DISTURBED samples -------------------------------------------


def test_the_kinds_of_a_disturbance_are_named_once_each():
    text = "steal 18 %, ranks' CPU share 71 %, host probe gather -18 %, copy -12 %"
    assert disturbed.kinds(text) == {
        'steal': 'steal 18 %',
        "ranks' CPU share": "ranks' CPU share 71 %",
        'host probe': 'host probe gather -18 %, copy -12 %',
    }
    left = disturbed.LeftOut()
    left.add('steal 18 %', 's1', 5)
    left.add("steal 4 %, ranks' CPU share 71 %", 's2', 2)
    assert left.samples == 7 and left.sessions == {'s1', 's2'}
    assert left.lines() == [
        "left out 2 DISTURBED samples of 1 session: ranks' CPU share "
        "(e.g. ranks' CPU share 71 %)",
        'left out 7 DISTURBED samples of 2 sessions: steal (e.g. steal 18 %)',
    ]
    assert disturbed.LeftOut().lines() == []


def _case(value, disturbed_by=''):
    return {
        'name': 'T', 'display_name': 'T', 'system': 'local',
        'partition': 'default', 'environ': 'gnu', 'result': 'pass',
        'reference_file': 't.yaml', 'reference_index': ['$partition'],
        'perfvalues': {'local:default:bw': [value, 0, None, None, 'GB/s', 'pass']},
        'disturbed': disturbed_by,
    }  # fmt: skip


def _report(path, uuid, *cases):
    info = {'uuid': uuid, 'num_cases': len(cases)}
    path.write_text(json.dumps({'session_info': info, 'runs': [{'testcases': cases}]}))
    return str(path)


def test_references_update_says_what_it_left_out(tmp_path):
    # Two runs of one test (--reruns 1): a rerun has its own run_index.
    rerun = {**_case(3.0, "ranks' CPU share 40 %"), 'run_index': 1}
    report = _report(tmp_path / 'r.json', 's1', _case(10.0), rerun)
    refs = tmp_path / 'refs'
    refs.mkdir()
    result = command(
        tmp_path, 'references', 'update', '--references', str(refs), '--from', report
    )
    assert result.returncode == 0, result.stderr
    assert (
        "left out 1 DISTURBED sample of 1 session: ranks' CPU share "
        "(e.g. ranks' CPU share 40 %)" in result.stdout
    )
    assert 'bw: 10 GB/s' in result.stdout  # the undisturbed sample alone


# -- floors and proposals -------------------------------------------------------


@pytest.mark.parametrize(
    'test, variable, unit, params, kind',
    [
        ('HPCCCheck', 'dgemm_star', 'GFlop/s', {}, 'DGEMM rate'),
        ('HPCCCheck', 'hpl', 'GFlop/s', {}, 'HPL rate'),
        ('HPCCCheck', 'stream_star_triad', 'GB/s', {}, 'memory bandwidth'),
        ('HPCCCheck', 'pingpong_latency_min', 'us', {}, 'latency'),
        ('NetPIPECheck', 'n_half', 'B', {}, 'message size'),
        ('CGSolverCheck', 'gflops', 'GFlop/s', {'ranks_per_node': '1'},
         'solver, one rank per node'),
        ('CGSolverCheck', 'time', 's', {'ranks_per_node': 'all'}, 'solver, all ranks'),
        ('CGSolverCheck', 'iterations', 'iterations', {}, 'count'),
        ('CGSolverCheck', 'mpi_share', '%', {}, 'share'),
    ],
)  # fmt: skip
def test_every_figure_has_a_kind_and_its_floor(test, variable, unit, params, kind):
    floor, found = floors.floor_of(test, variable, unit, params)
    assert found == kind
    assert floor == floors.FLOORS[kind] >= floors.MINIMUM


def test_a_band_from_one_session_is_never_plus_minus_three_percent(tmp_path):
    # Five reruns of HPL within one session that agree to 0.1 %.
    cases = []
    for value in (90.0, 90.1, 89.9, 90.05, 89.95):
        case = _case(value)
        case['perfvalues'] = {
            'local:default:hpl': [value, 0, None, None, 'GFlop/s', 'pass']
        }
        case['run_index'] = len(cases)  # each rerun its own, as ReFrame writes
        cases.append(case)
    report = _report(tmp_path / 'r.json', 's1', *cases)
    (old,) = refupdate.propose(samples.collect([report]))
    assert old.tolerance == 0.03  # what `references update` writes by default
    found = baseline.propose([report])
    (prop,) = found.proposals
    assert prop.kind == 'HPL rate'
    assert prop.tolerance == floors.FLOORS['HPL rate'] > 0.03
    assert baseline.refusal(found, 'local').startswith(
        'baseline: 1 of 1 figures have fewer than 3 undisturbed sessions (fewest '
        '1: T / hpl; 1 in all); 3 are needed: record more with `clusterbench '
        'baseline --system local --sessions 2 --from '
    )


def test_rounds_alternate_their_order_unless_one_is_given():
    assert baseline.round_options(0, ['-n', 'X']) == ['--exec-order=name', '-n', 'X']
    assert baseline.round_options(1) == ['--exec-order=rname']
    assert baseline.round_options(2) == ['--exec-order=name']
    assert baseline.round_options(1, ['--exec-order=uid']) == ['--exec-order=uid']


def test_rounds_are_spaced():
    said, slept, ran = [], [], []
    baseline.record(3, 2.5, ran.append, said.append, slept.append)
    assert ran == [0, 1, 2] and slept == [150.0, 150.0]
    assert said[1] == 'baseline: waiting 2.5 min before round 2 of 3'


# -- end to end, on real runs -----------------------------------------------------


@pytest.fixture(scope='module')
def recorded(tmp_path_factory):
    """Three real sessions recorded by `clusterbench baseline` into refs/."""
    tmp = tmp_path_factory.mktemp('baseline')
    refs = tmp / 'refs'
    result = command(
        tmp, 'baseline', '--system', 'local', '--references', str(refs),
        '--results', str(tmp / 'results'), '--sessions', '3', '--spacing', '0',
        '--checks', CG_CHECKS, '--', *TINY_CG, *QUIET,
    )  # fmt: skip
    sessions = sorted((tmp / 'results' / 'local').iterdir())
    return tmp, refs, result, sessions


@pytest.mark.integration
def test_baseline_records_three_sessions_and_writes_readable_references(recorded):
    tmp, refs, result, sessions = recorded
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert len(sessions) == 3
    orders = [
        json.loads((s / 'report.json').read_text())['session_info']['cmdline']
        for s in sessions
    ]
    assert ['--exec-order=name' in c for c in orders] == [True, False, True]
    assert '--exec-order=rname' in orders[1]
    out = result.stdout
    assert 'baseline: 3 undisturbed session(s) of 3 given or recorded' in out
    line = next(x for x in out.splitlines() if f'{FIGURE} / gflops' in x)
    assert line.lstrip().startswith('+ ') and '(n=3 in 3 sessions' in line
    assert 'floor of solver, one rank per node' in line and '$index' not in out
    written = refs / 'local' / 'cgsolver.yaml'
    assert f'wrote {written}' in out
    prov = refprov.load(str(refs / 'local' / 'provenance' / 'cgsolver.yaml'))
    (entry,) = prov['CGSolverCheck'].values()
    assert len(refprov.versions(entry)) == 1  # one baseline, one version
    assert len(refprov.current(entry)['sessions']) == 3
    gflops = refprov.figures(entry)['gflops']['reference']
    assert -gflops[1] >= floors.FLOORS['solver, one rank per node']


@pytest.mark.integration
def test_a_normal_run_is_judged_against_the_baseline(recorded):
    tmp, refs, result, _ = recorded
    assert result.returncode == 0, result.stderr
    run = command(
        tmp, 'run', '--system', 'local', '--references', str(refs),
        '--results', str(tmp / 'later'), '--confirm', '0', '--checks', CG_CHECKS,
        '--', *TINY_CG, *QUIET,
    )  # fmt: skip
    # Every figure has a reference now (on a loaded machine a speed may be
    # SLOWER; the iteration count is deterministic and passes).
    summary = re.search(r'^(\d+) pass, .*\b(\d+) no reference', run.stdout, re.M)
    assert summary, run.stdout[-3000:]
    assert int(summary[1]) >= 1 and summary[2] == '0', run.stdout[-3000:]
    shown = [x for x in run.stdout.splitlines() if x.startswith('CGSolverCheck  ')]
    assert not any(' iterations ' in x for x in shown)  # only the others are shown


@pytest.mark.integration
def test_fewer_than_three_sessions_are_refused_unless_forced(recorded, tmp_path):
    tmp, _, result, sessions = recorded
    assert result.returncode == 0, result.stderr
    refs = tmp_path / 'refs'
    args = ('baseline', '--references', str(refs), '--sessions', '0', '--from')
    two = command(tmp_path, *args, *map(str, sessions[:2]))
    assert two.returncode == 2
    (line,) = two.stderr.splitlines()
    assert line.startswith(
        'clusterbench: error: baseline: 5 of 5 figures have fewer than 3 '
        f'undisturbed sessions (fewest 2: {FIGURE} / '
    )
    assert '; 2 in all); 3 are needed' in line and '--sessions 1 --from' in line
    assert not (refs / 'local').exists()
    forced = command(tmp_path, *args, *map(str, sessions[:2]), '--force')
    assert forced.returncode == 0, forced.stderr
    assert (refs / 'local' / 'cgsolver.yaml').exists()


@pytest.mark.integration
def test_a_disturbed_session_is_left_out_and_named(recorded, tmp_path):
    tmp, _, result, sessions = recorded
    assert result.returncode == 0, result.stderr
    # The third session as if its run had been disturbed (another uuid:
    # another session).
    data = json.loads((sessions[2] / 'report.json').read_text())
    data = copy.deepcopy(data)
    data['session_info']['uuid'] = str(uuidlib.uuid4())
    for run in data['runs']:
        for case in run['testcases']:
            case['disturbed'] = 'steal 18 %'
    copied = tmp_path / 'local' / '20990101T000000'
    os.makedirs(copied)
    (copied / 'report.json').write_text(json.dumps(data))
    refs = tmp_path / 'refs'
    args = ('baseline', '--references', str(refs), '--sessions', '0', '--from')
    three = command(tmp_path, *args, *map(str, sessions[:2]), str(copied))
    assert three.returncode == 2
    assert '(fewest 2: ' in three.stderr and '; 2 in all)' in three.stderr
    assert (
        'baseline: left out 5 DISTURBED samples of 1 session: steal (e.g. steal 18 %)'
        in three.stdout
    )
    four = command(tmp_path, *args, *map(str, sessions), str(copied), '--dry-run')
    assert four.returncode == 0, four.stderr
    assert 'baseline: 3 undisturbed session(s) of 4 given or recorded' in four.stdout
    assert 'left out 5 DISTURBED samples of 1 session: steal' in four.stdout
    assert '(dry run: nothing written)' in four.stdout and not refs.exists()


def test_references_update_takes_the_floors_of_the_kinds(tmp_path):
    case = _case(90.0)
    case['perfvalues'] = {'local:default:hpl': [90.0, 0, None, None, 'GFlop/s', 'pass']}
    report = _report(tmp_path / 'r.json', 's1', case)
    refs = tmp_path / 'refs'
    refs.mkdir()
    args = ('references', 'update', '--references', str(refs), '--from', report)
    kind = command(tmp_path, *args, '--floor', 'kind')
    assert kind.returncode == 0, kind.stderr
    assert 'hpl: 90 GFlop/s ±8 %' in kind.stdout
    bad = command(tmp_path, *args, '--floor', 'wide')
    assert bad.returncode == 2 and 'Traceback' not in bad.stderr
    said = 'a relative tolerance (e.g. 0.05) or "kind", from 0 to 1, not \'wide\''
    assert said in bad.stderr


def _named(name, value, disturbed_by=''):
    case = _case(value, disturbed_by)
    case.update(name=name, display_name=name)
    # A figure some benchmark declares: an update writes no other.
    case['perfvalues'] = {
        'local:default:bandwidth': case['perfvalues'].pop('local:default:bw')
    }
    return case


def test_complete_only_writes_the_figures_three_sessions_back(tmp_path):
    # On a shared machine a 2-rank figure is often DISTURBED: the others are
    # still recorded, and the short one is named and left without reference.
    reports = [
        _report(
            tmp_path / f'r{i}.json',
            f's{i}',
            _named('Steady', 10.0 + i),
            _named('Shaky', 5.0, "ranks' CPU share 80 %" if i == 2 else ''),
        )
        for i in range(3)
    ]
    refs = tmp_path / 'refs'
    args = ('baseline', '--references', str(refs), '--sessions', '0', '--from')
    refused = command(tmp_path, *args, *reports)
    assert refused.returncode == 2 and 'with --complete-only' in refused.stderr
    assert not refs.exists()
    result = command(tmp_path, *args, *reports, '--complete-only')
    assert result.returncode == 0, result.stderr
    assert 'stay without a reference' in result.stdout
    assert '    - Shaky / bandwidth (2)' in result.stdout
    written = (refs / 'local' / 't.yaml').read_text()
    assert 'Steady' in written and 'Shaky' not in written

"""`clusterbench references update`: proposals, dry runs, atomic writes, provenance."""

import copy
import json
import os
import threading

import pytest
import yaml
from rfm import clusterbench

from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.reference import Reference
from clusterbench.judging import stats, verdict
from clusterbench.parsers import stream
from clusterbench.references import update as refupdate
from clusterbench.references import validate as refdata
from clusterbench.results import samples
from clusterbench.results.runreport import Figure


def case(name, values, *, result='pass', phase=None, env='gnu-openmpi', **params):
    index = ['$partition', '$environ', '$processor.model', *params]
    return {
        'display_name': ' '.join([name, *(f'%{k}={v}' for k, v in params.items())]),
        'unique_name': name,
        'system': 'local',
        'partition': 'default',
        'environ': env,
        'result': result,
        'fail_phase': phase,
        'fail_reason': None,
        'fixture': False,
        'reference_file': 'x.yaml',
        'reference_index': index,
        'processor_facts': {'model': 'AMD EPYC', 'num_cpus': 2},
        'job_nodelist': ['n1'],
        'perfvalues': {
            f'local:default:{k}': [v, 0, None, None, 'GB/s', 'pass']
            for k, v in values.items()
        },
        **params,
    }


def report(tmp_path, name, *runs, uuid='s1'):
    path = tmp_path / name
    data = {
        'session_info': {'uuid': uuid, 'num_cases': 1},
        'runs': [{'testcases': list(cases)} for cases in runs],
    }
    path.write_text(json.dumps(data))
    return str(path)


def test_median_and_tolerance_from_spread(tmp_path):
    values = [100, 102, 98, 101, 99]
    path = report(
        tmp_path, 'r.json', *[[case('T', {'bandwidth': v}, ranks='2')] for v in values]
    )
    (prop,) = refupdate.propose(samples.collect([path]), floor=0.05, k=3)
    assert prop.reference == 100
    # MAD = 1 -> relative robust spread 1.4826 %, x3 = 4.4 % < floor 5 %
    assert prop.tolerance == 0.05
    (prop,) = refupdate.propose(samples.collect([path]), floor=0.01, k=3)
    assert prop.tolerance == 0.04
    assert prop.samples.key == ('local:default', 'gnu-openmpi', 'AMD EPYC', '2')


def test_a_spread_wider_than_the_value_stops_the_band_at_zero(tmp_path):
    values = [1, 10, 3]  # MAD 2 of median 3: tolerance 3 x 99 % = 297 %
    path = report(tmp_path, 'r.json', *[[case('T', {'n_half': v})] for v in values])
    (prop,) = refupdate.propose(samples.collect([path]))
    assert prop.tolerance == 2.97
    assert prop.entry == [3.0, -1.0, 2.97, 'GB/s']


def test_unverified_cases_are_never_samples(tmp_path):
    cases = [
        case('T', {'bandwidth': 100}),
        case('T', {'bandwidth': 1}, result='fail', phase='sanity'),
        case('T', {'bandwidth': 120}, result='fail', phase='performance'),
    ]
    # Three repeats of one test (`--repeat 3`): each its own unique name, as
    # ReFrame writes them (a case given twice is refused: bad input).
    for number, each in enumerate(cases):
        each['unique_name'] = f'T_{number}'
    path = report(tmp_path, 'r.json', cases)
    (group,) = samples.collect([path])
    assert sorted(group.values) == [100, 120]


def test_empty_or_foreign_report_changes_nothing(tmp_path):
    empty = report(tmp_path, 'empty.json', [])
    with pytest.raises(ClusterbenchError, match='no verified figure'):
        samples.collect([empty])
    foreign = tmp_path / 'foreign.json'
    foreign.write_text('{"a": 1}')
    result = clusterbench(
        'references',
        'update',
        '--from',
        str(foreign),
        '--directory',
        str(tmp_path / 'refs'),
        '--write',
    )
    assert result.returncode == 2
    assert 'not a ReFrame run report' in result.stderr
    assert not (tmp_path / 'refs').exists()


def test_dry_run_then_write_then_update_keeps_history(tmp_path):
    refs = tmp_path / 'refs'
    first = report(
        tmp_path, 'a.json', [case('T', {'bandwidth': 10.0, 'hpcg_bandwidth': 2.0})]
    )
    dry = clusterbench(
        'references', 'update', '--from', first, '--directory', str(refs)
    )
    assert dry.returncode == 0, dry.stderr
    # Read as a reader reads it: the place once, then the figure by name.
    assert 'local:default, gnu-openmpi, AMD EPYC\n' in dry.stdout
    # One session: the floor of its kind of figure (a CG solver's: 29 %).
    assert '  + T / bandwidth: 10 GB/s ±29 % (n=1 in 1 session' in dry.stdout
    assert ' > ' not in dry.stdout
    assert (
        'warning: references update: 2 of 2 figures have fewer than 3 undisturbed '
        'sessions (fewest 1: ' in dry.stdout
    )
    assert 'dry run' in dry.stdout and not refs.exists()

    # Fewer than 3 sessions are written only when forced
    # (tests/references/test_rule_of_three.py).
    wrote = clusterbench(
        'references', 'update', '--from', first, '--directory', str(refs), '--write',
        '--force',
    )  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    assert refdata.check_file(str(refs / 'local' / 'x.yaml')) == {'T': 2}
    second = report(tmp_path, 'b.json', [case('T', {'bandwidth': 20.0})], uuid='s2')
    again = clusterbench(
        'references', 'update', '--from', second, '--directory', str(refs), '--write',
        '--force',
    )  # fmt: skip
    assert '  ~ T / bandwidth: 10 GB/s ±29 % -> 20 GB/s' in again.stdout
    data = yaml.safe_load((refs / 'local' / 'x.yaml').read_text())
    leaf = data['T']['local:default']['gnu-openmpi']['AMD EPYC']
    assert leaf == {
        'bandwidth': [20.0, -0.29, 0.29, 'GB/s'],
        'hpcg_bandwidth': [2.0, -0.29, 0.29, 'GB/s'],
    }
    prov = yaml.safe_load((refs / 'local' / 'provenance' / 'x.yaml').read_text())
    # The versions of the entry, oldest first: an update appends one.
    earlier, entry = prov['T']['local:default/gnu-openmpi/AMD EPYC']
    assert entry['sessions'] == ['s2']
    assert entry['reports'] == ['b.json']  # never an absolute path
    assert earlier['sessions'] == ['s1']
    assert earlier['figures']['bandwidth']['values'] == [10.0]


def test_concurrent_writers_do_not_corrupt_the_store(tmp_path):
    refs = str(tmp_path / 'refs')
    # Eight declared figures, one per writer.
    names = [f'stream_{w}_{k}' for w in ('star', 'single') for k in stream.KERNELS]
    paths = [
        report(tmp_path, f'r{i}.json', [case('T', {name: float(i + 1)})], uuid=f's{i}')
        for i, name in enumerate(names)
    ]
    props = [refupdate.propose(samples.collect([p])) for p in paths]
    threads = [
        threading.Thread(target=refupdate.write, args=(p, refs, [path]))
        for p, path in zip(props, paths)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert refdata.check_file(os.path.join(refs, 'local', 'x.yaml')) == {'T': 8}
    assert not [f for f in os.listdir(refs) if f.startswith('.tmp-')]
    assert os.listdir(refs) == ['local']


def test_references_round_trip_through_reframe_lookup_keys(tmp_path):
    # Keys are written with the types the test attributes have, so that
    # ReFrame's $index lookup (int 7 vs '7') finds them.
    c = case('T', {'bandwidth': 1.0}, stencil=7, ranks='1')
    path = report(tmp_path, 'r.json', [copy.deepcopy(c)])
    refupdate.write(refupdate.propose(samples.collect([path])), str(tmp_path), [path])
    data = yaml.safe_load((tmp_path / 'local' / 'x.yaml').read_text())
    assert 7 in data['T']['local:default']['gnu-openmpi']['AMD EPYC']
    assert '1' in data['T']['local:default']['gnu-openmpi']['AMD EPYC'][7]


def test_one_sided_bands_bound_only_the_bad_side(tmp_path):
    # What plain ReFrame does with these bands is what clusterbench does: a
    # faster figure passes both, a slower one fails both.
    fast = case('T', {'bandwidth': 10.0, 'time': 2.0, 'iterations': 7.0})
    for key in list(fast['perfvalues']):
        if key.endswith(':time'):
            fast['perfvalues'][key][4] = 's'
        if key.endswith(':iterations'):
            fast['perfvalues'][key][4] = 'iterations'
    path = report(tmp_path, 'a.json', [fast])
    refs = tmp_path / 'refs'
    wrote = clusterbench(
        'references',
        'update',
        '--from',
        path,
        '--directory',
        str(refs),
        '--one-sided',
        '--write',
        '--force',
    )
    assert wrote.returncode == 0, wrote.stderr
    # One session: the floor of the kind of figure (a CG solver's: 29 %).
    assert 'T / bandwidth: 10 GB/s -29 %/+∞' in wrote.stdout
    assert 'T / time: 2 s -∞/+29 %' in wrote.stdout
    leaf = yaml.safe_load((refs / 'local' / 'x.yaml').read_text())['T']['local:default']
    leaf = leaf['gnu-openmpi']['AMD EPYC']
    assert leaf['bandwidth'] == [10.0, -0.29, None, 'GB/s']
    assert leaf['time'] == [2.0, None, 0.29, 's']
    # No better direction: both sides stay bounded.
    assert leaf['iterations'] == [7.0, -0.03, 0.03, 'iterations']
    assert refdata.check_file(str(refs / 'local' / 'x.yaml')) == {'T': 3}

    def judged(name, value, unit):
        ref, lower, upper, _ = leaf[name]
        against = Reference(ref, lower, upper, unit)
        figure = Figure('T', 'local', 'default', 'e', name, value, unit, against, None)
        low, high = verdict.bounds(ref, lower, upper)  # ReFrame's own range
        return verdict.judge(figure), low <= value <= high

    assert judged('bandwidth', 100.0, 'GB/s') == (verdict.PASS, True)
    assert judged('bandwidth', 7.0, 'GB/s') == (verdict.SLOWER, False)
    assert judged('time', 0.1, 's') == (verdict.PASS, True)
    assert judged('time', 2.6, 's') == (verdict.SLOWER, False)


def test_update_writes_only_into_the_directories_of_the_reports_systems(tmp_path):
    refs = tmp_path / 'refs'
    (refs / 'other').mkdir(parents=True)
    untouched = "T:\n  'other:p':\n    bandwidth: [5.0, -0.1, 0.1, GB/s]\n"
    (refs / 'other' / 'x.yaml').write_text(untouched)
    on_box = case('T', {'bandwidth': 30.0})
    on_box['system'] = 'box'
    on_box['perfvalues'] = {
        'box:default:bandwidth': [30.0, 0, None, None, 'GB/s', 'pass']
    }
    path = report(tmp_path, 'r.json', [case('T', {'bandwidth': 10.0}), on_box])
    wrote = clusterbench(
        'references', 'update', '--from', path, '--directory', str(refs), '--write',
        '--force',
    )  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    assert f'wrote {refs}/box/x.yaml' in wrote.stdout
    assert f'wrote {refs}/local/x.yaml' in wrote.stdout
    # Each system's figures in its own directory, with its own provenance.
    local = yaml.safe_load((refs / 'local' / 'x.yaml').read_text())['T']
    box = yaml.safe_load((refs / 'box' / 'x.yaml').read_text())['T']
    assert list(local) == ['$index', 'local:default']
    assert list(box) == ['$index', 'box:default']
    assert box['box:default']['gnu-openmpi']['AMD EPYC']['bandwidth'][0] == 30.0
    prov = yaml.safe_load((refs / 'box' / 'provenance' / 'x.yaml').read_text())
    assert list(prov['T']) == ['box:default/gnu-openmpi/AMD EPYC']
    # A system none of the reports ran on is left as it was, no file added.
    assert (refs / 'other' / 'x.yaml').read_text() == untouched
    assert sorted(os.listdir(refs / 'other')) == ['x.yaml']
    # Journal and lock of each update stay in its system's directory.
    assert sorted(p.name for p in refs.iterdir()) == ['box', 'local', 'other']


def test_a_system_name_that_leads_out_of_the_root_is_refused(tmp_path):
    bad = case('T', {'bandwidth': 1.0})
    bad['system'] = '../outside'
    path = report(tmp_path, 'r.json', [bad])
    result = clusterbench(
        'references', 'update', '--from', path, '--directory', str(tmp_path / 'refs')
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "clusterbench: error: '../outside': not a system name"
    ]
    assert not (tmp_path / 'outside').exists()


# -- the spread between sessions ------------------------------------------------


def sessions_of(tmp_path, variable, per_session, unit='GB/s'):
    """One report per session, each with its reruns of one figure."""
    paths = []
    for i, values in enumerate(per_session):
        runs = []
        for v in values:
            c = case('T', {variable: v})
            for key in c['perfvalues']:
                c['perfvalues'][key][4] = unit
            runs.append([c])
        paths.append(report(tmp_path, f's{i}.json', *runs, uuid=f'session{i}'))
    return paths


def test_the_tolerance_is_the_spread_between_sessions_not_of_reruns(tmp_path):
    # Reruns inside a session agree to 0.2 %; the sessions differ by 17 %.
    per_session = [[100.0, 100.2, 99.9], [112.0, 112.1, 111.8], [95.0, 95.1, 95.2]]
    paths = sessions_of(tmp_path, 'bandwidth', per_session)
    (prop,) = refupdate.propose(samples.collect(paths), floor=0.03, k=3)
    medians = [100.0, 112.0, 95.1]
    assert prop.reference == 100.0  # the median of the sessions' medians
    assert prop.spread == pytest.approx(stats.relative_spread(medians))
    # k x the spread of the medians (MAD 4.9): 21.8 %, beyond their reach.
    assert prop.tolerance == 0.22
    # Every session's median is inside the band; the reruns alone (one
    # session) would have given the 3 % floor.
    low, high = verdict.bounds(prop.reference, *prop.entry[1:3])
    assert all(low <= m <= high for m in medians)
    (alone,) = refupdate.propose(samples.collect(paths[:1]), floor=0.03, k=3)
    assert alone.tolerance == 0.03


def test_a_bimodal_figure_seen_in_both_modes_is_covered(tmp_path):
    # NetPIPE's intra-node peak: 4.1 GB/s in two sessions, 20.9 in the third.
    paths = sessions_of(tmp_path, 'bandwidth', [[4.1, 4.1], [4.08, 4.12], [20.9, 20.7]])
    (prop,) = refupdate.propose(samples.collect(paths), floor=0.03, k=3)
    assert prop.reference == 4.1
    low, high = verdict.bounds(prop.reference, *prop.entry[1:3])
    assert low == 0 and high >= 20.8  # reach to 20.8 (+410 %) plus the floor
    # Both modes pass ReFrame's band; the wide band says what it cannot judge:
    # a run in the low mode 12 % under the reference is INCONCLUSIVE.
    for value, expected in ((20.8, verdict.PASS), (4.1, verdict.PASS)):
        ref = Reference(4.1, *prop.entry[1:3], 'GB/s')
        fig = Figure('T', 'l', 'd', 'e', 'bandwidth', value, 'GB/s', ref, None)
        assert verdict.group([fig])[0].verdict == expected
    ref = Reference(4.1, *prop.entry[1:3], 'GB/s')
    fig = Figure('T', 'l', 'd', 'e', 'bandwidth', 3.6, 'GB/s', ref, None)
    (judged,) = verdict.group([fig])
    assert judged.kind == verdict.INCONCLUSIVE
    assert judged.verdict.detail.startswith('-12 % inside')
    # Two sessions: the centre is between the modes, half the range reaches both.
    (two,) = refupdate.propose(samples.collect(paths[1:]), floor=0.03, k=3)
    low, high = verdict.bounds(two.reference, *two.entry[1:3])
    assert low <= 4.09 and high >= 20.8


def test_a_share_near_zero_gets_an_absolute_floor(tmp_path):
    # mpi_share of one-rank CG runs: 0.05 % give or take noise.
    per_session = [[0.050, 0.051], [0.057, 0.056], [0.049, 0.048]]
    paths = sessions_of(tmp_path, 'mpi_share', per_session, unit='%')
    (prop,) = refupdate.propose(samples.collect(paths), floor=0.03, k=3)
    assert prop.reference == 0.0505
    # 1 percentage point around 0.05 %: +1980 %, and the lower bound stops at 0.
    assert prop.entry[1] == -1.0 and prop.entry[2] == pytest.approx(19.8, abs=0.01)
    low, high = verdict.bounds(prop.reference, *prop.entry[1:3])
    assert low == 0 and high == pytest.approx(1.05, abs=0.01)
    for value in (0.038, 0.057, 0.049, 0.9):
        ref = Reference(prop.reference, *prop.entry[1:3], '%')
        fig = Figure('T', 'l', 'd', 'e', 'mpi_share', value, '%', ref, None)
        assert verdict.group([fig])[0].verdict == verdict.PASS
    # A real change of more than a point is a change.
    ref = Reference(prop.reference, *prop.entry[1:3], '%')
    fig = Figure('T', 'l', 'd', 'e', 'mpi_share', 1.6, '%', ref, None)
    assert verdict.group([fig])[0].verdict == verdict.FLAGGED
    # `references check` measures the share in points: ±1 point is narrow.
    refs = tmp_path / 'refs'
    refupdate.write([prop], str(refs), paths)
    assert refdata.wide_tolerances(str(refs)) == []


def test_update_names_sessions_and_warns_below_three(tmp_path):
    refs = tmp_path / 'refs'
    paths = sessions_of(tmp_path, 'bandwidth', [[10.0, 10.1], [10.2], [10.1]])
    two = clusterbench(
        'references', 'update', '--directory', str(refs), '--from', *paths[:2]
    )
    assert two.returncode == 0, two.stderr
    assert '(n=3 in 2 sessions, spread' in two.stdout
    assert (
        'warning: references update: 1 of 1 figures have fewer than 3 undisturbed '
        'sessions (fewest 2: T / bandwidth; 2 in all)' in two.stdout
    )
    three = clusterbench(
        'references', 'update', '--directory', str(refs), '--write', '--from', *paths
    )
    assert three.returncode == 0, three.stderr
    assert '(n=4 in 3 sessions, spread' in three.stdout
    # No shortfall (a band wider than 10 % is still named: a `check` warning).
    assert 'warning: references update' not in three.stdout
    prov = yaml.safe_load((refs / 'local' / 'provenance' / 'x.yaml').read_text())
    figure = prov['T']['local:default/gnu-openmpi/AMD EPYC'][-1]['figures']['bandwidth']
    assert figure['sessions'] == 3
    assert sorted(figure['session_medians']) == [10.05, 10.1, 10.2]


def test_one_sided_and_k_and_floor_apply_to_the_session_rule(tmp_path):
    paths = sessions_of(tmp_path, 'bandwidth', [[100.0], [104.0], [98.0]])
    groups = samples.collect(paths)
    (prop,) = refupdate.propose(groups, floor=0.03, k=1, one_sided=True)
    # reach to 104 (+4 %) plus the 3 % floor; k x spread (2.97 %) is less.
    assert prop.entry == [100.0, -0.07, None, 'GB/s']
    (prop,) = refupdate.propose(groups, floor=0.10, k=1)
    assert prop.tolerance == 0.14
    (prop,) = refupdate.propose(groups, floor=0.01, k=10)
    assert prop.tolerance == 0.3

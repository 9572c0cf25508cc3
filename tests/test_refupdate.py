"""`clusterbench references update`: proposals, dry runs, atomic writes, provenance."""

import copy
import json
import os
import threading

import pytest
import yaml
from rfm import clusterbench

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict
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
        tmp_path, 'r.json', *[[case('T', {'bw': v}, ranks='2')] for v in values]
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
    path = report(
        tmp_path,
        'r.json',
        [
            case('T', {'bw': 100}),
            case('T', {'bw': 1}, result='fail', phase='sanity'),
            case('T', {'bw': 120}, result='fail', phase='performance'),
        ],
    )
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
    first = report(tmp_path, 'a.json', [case('T', {'bw': 10.0, 'lat': 2.0})])
    dry = clusterbench(
        'references', 'update', '--from', first, '--directory', str(refs)
    )
    assert dry.returncode == 0, dry.stderr
    assert (
        '+ T > local:default > gnu-openmpi > AMD EPYC > bw: 10 GB/s ±3%' in dry.stdout
    )
    assert 'dry run' in dry.stdout and not refs.exists()

    wrote = clusterbench(
        'references', 'update', '--from', first, '--directory', str(refs), '--write'
    )
    assert wrote.returncode == 0, wrote.stderr
    assert refdata.check_file(str(refs / 'x.yaml')) == {'T': 2}
    second = report(tmp_path, 'b.json', [case('T', {'bw': 20.0})], uuid='s2')
    again = clusterbench(
        'references', 'update', '--from', second, '--directory', str(refs), '--write'
    )
    assert (
        '~ T > local:default > gnu-openmpi > AMD EPYC > bw: 10 GB/s -3%/+3% -> 20'
        in again.stdout
    )
    data = yaml.safe_load((refs / 'x.yaml').read_text())
    leaf = data['T']['local:default']['gnu-openmpi']['AMD EPYC']
    assert leaf == {
        'bw': [20.0, -0.03, 0.03, 'GB/s'],
        'lat': [2.0, -0.03, 0.03, 'GB/s'],
    }
    prov = yaml.safe_load((refs / 'provenance' / 'x.yaml').read_text())
    entry = prov['T']['local:default/gnu-openmpi/AMD EPYC']
    assert entry['sessions'] == ['s2']
    assert entry['reports'] == ['b.json']  # never an absolute path
    assert entry['history'][0]['sessions'] == ['s1']
    assert entry['history'][0]['figures']['bw']['values'] == [10.0]


def test_concurrent_writers_do_not_corrupt_the_store(tmp_path):
    refs = str(tmp_path / 'refs')
    paths = [
        report(
            tmp_path, f'r{i}.json', [case('T', {f'v{i}': float(i + 1)})], uuid=f's{i}'
        )
        for i in range(8)
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
    assert refdata.check_file(os.path.join(refs, 'x.yaml')) == {'T': 8}
    assert not [f for f in os.listdir(refs) if f.startswith('.tmp-')]


def test_references_round_trip_through_reframe_lookup_keys(tmp_path):
    # Keys are written with the types the test attributes have, so that
    # ReFrame's $index lookup (int 7 vs '7') finds them.
    c = case('T', {'bw': 1.0}, stencil=7, ranks='1')
    path = report(tmp_path, 'r.json', [copy.deepcopy(c)])
    refupdate.write(refupdate.propose(samples.collect([path])), str(tmp_path), [path])
    data = yaml.safe_load((tmp_path / 'x.yaml').read_text())
    assert 7 in data['T']['local:default']['gnu-openmpi']['AMD EPYC']
    assert '1' in data['T']['local:default']['gnu-openmpi']['AMD EPYC'][7]


def test_one_sided_bands_bound_only_the_bad_side(tmp_path):
    # What plain ReFrame does with these bands is what clusterbench does: a
    # faster figure passes both, a slower one fails both.
    fast = case('T', {'bw': 10.0, 'time': 2.0, 'iterations': 7.0})
    for key in list(fast['perfvalues']):
        if key.endswith(':time'):
            fast['perfvalues'][key][4] = 's'
        if key.endswith(':iterations'):
            fast['perfvalues'][key][4] = ''
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
    )
    assert wrote.returncode == 0, wrote.stderr
    assert '> bw: 10 GB/s -3%/+∞' in wrote.stdout
    assert '> time: 2 s -∞/+3%' in wrote.stdout
    leaf = yaml.safe_load((refs / 'x.yaml').read_text())['T']['local:default']
    leaf = leaf['gnu-openmpi']['AMD EPYC']
    assert leaf['bw'] == [10.0, -0.03, None, 'GB/s']
    assert leaf['time'] == [2.0, None, 0.03, 's']
    # No better direction: both sides stay bounded.
    assert leaf['iterations'] == [7.0, -0.03, 0.03, '']
    assert refdata.check_file(str(refs / 'x.yaml')) == {'T': 3}

    def judged(name, value, unit):
        ref, lower, upper, _ = leaf[name]
        figure = Figure(
            'T', 'local', 'default', 'e', name, value, unit, ref, lower, upper, None
        )
        low, high = verdict.bounds(ref, lower, upper)  # ReFrame's own range
        return verdict.judge(figure), low <= value <= high

    assert judged('bw', 100.0, 'GB/s') == (verdict.PASS, True)
    assert judged('bw', 9.0, 'GB/s') == (verdict.SLOWER, False)
    assert judged('time', 0.1, 's') == (verdict.PASS, True)
    assert judged('time', 2.2, 's') == (verdict.SLOWER, False)

"""An "inter-node" latency no network can give is said in one line (issue
30, finding 4: MPICH's 0.67 us between the test cluster's "nodes" was shared
memory, and nothing said so).

On the stored session of an AMD Zen 3 host (one node: its OSU runs within one
node measured, its inter-node ones skipped): the inter-node test cases are
given their intra-node twins' figures, as two nodes of one host would record
them (NetPIPE's ping-pong: shared memory), or as a network would (ten times
slower).
"""

import copy
import json
import os

import pytest
from conftest import require_fixtures

from clusterbench.results import plausibility


@pytest.fixture
def session():
    path = os.path.join(require_fixtures(), 'sessions', 'AMD-25-1', 'report.json')
    with open(path) as f:
        return json.load(f)


def with_inter_latency(data, factor):
    """*data* with each inter-node case given its intra-node twin's
    figures times *factor*."""
    data = copy.deepcopy(data)
    cases = [c for r in data['runs'] for c in r['testcases']]

    def twin_key(case):
        return case['display_name'].replace(f'%placement={case["placement"]}', '')

    intra = {twin_key(c): c for c in cases if c.get('placement') == 'intra'}
    for case in cases:
        twin = intra.get(twin_key(case)) if case.get('placement') == 'inter' else None
        if twin and twin.get('perfvalues'):
            case['perfvalues'] = {
                k: [v[0] * factor, *v[1:]] for k, v in twin['perfvalues'].items()
            }
            case['result'] = 'pass'
    return data


def write(tmp_path, data):
    path = tmp_path / 'report.json'
    path.write_text(json.dumps(data))
    return [str(path)]


def test_shared_memory_figures_between_nodes_are_said(tmp_path, session):
    found = plausibility.lines(write(tmp_path, with_inter_latency(session, 1.0)))
    (line,) = found
    assert line.startswith('implausible: NetPIPECheck %mode=pingpong on ')
    assert ' on local:default with gnu-openmpi: inter-node latency_1B 0.18 us is ' in (
        line
    )
    assert 'not slower than within one node (0.18 us): MPI is not crossing a ' in line


def test_a_network_latency_is_not_said(tmp_path, session):
    assert plausibility.lines(write(tmp_path, with_inter_latency(session, 10))) == []
    # Nor anything without inter-node figures (the session as it was).
    assert plausibility.lines(write(tmp_path, session)) == []

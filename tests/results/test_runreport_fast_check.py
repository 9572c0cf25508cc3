"""The fast check of a run report's shape (clusterbench.results.runreport:
_conforms and _plain) never passes what the full check (jsonschema, and the
walk that names the place of a problem) refuses. Random mutations of a real
whole session: every one the fast check passes, jsonschema passes too, and
every one it refuses still gets jsonschema's one-line message."""

import copy
import json
import os
import random

import pytest
from conftest import FIXTURES

from clusterbench.core.errors import ClusterbenchError
from clusterbench.results import reportschema, runreport

SESSION = os.path.join(FIXTURES, 'sessions', 'AMD-25-1', 'report.json')

#: Values a mutation puts anywhere: every JSON type, and the hostile ones.
ODD = [None, True, 0, 1, 1.0, -2.5, 1e308, '', 'x', ' lead', '\ud800', [], {},
       [1, 2], {'a': 1}, ['a'], float('nan'), float('inf'), 10**400]  # fmt: skip


def _places(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _places(item, (*path, i))


def _mutate(data, rng):
    out = copy.deepcopy(data)
    places = [p for p in _places(out) if p]
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(places)
        try:
            parent = out
            for step in path[:-1]:
                parent = parent[step]
            if isinstance(parent, dict) and rng.random() < 0.2:
                del parent[path[-1]]
            elif isinstance(parent, dict) and rng.random() < 0.1:
                parent[rng.choice(['a:b', 'nocolon', 'x:y:z', '\ud800'])] = rng.choice(
                    ODD
                )
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(ODD))
        except (KeyError, IndexError, TypeError):
            continue
    return out


@pytest.fixture(scope='module')
def session():
    with open(SESSION) as f:
        data = json.load(f)
    # Keep it small: the cases that measured, and a few that did not.
    cases = data['runs'][0]['testcases']
    data['runs'][0]['testcases'] = [c for c in cases if c['perfvalues']][:6] + cases[:3]
    return data


def test_the_fast_check_passes_the_real_session(session):
    assert reportschema._plain(session)
    assert reportschema._conforms(session, reportschema.SCHEMA)


def test_the_fast_check_never_passes_what_the_full_check_refuses(session):
    rng = random.Random(27)
    refused = 0
    for _ in range(300):
        data = _mutate(session, rng)
        full = list(reportschema._VALIDATOR.iter_errors(data))
        if reportschema._conforms(data, reportschema.SCHEMA):
            assert full == [], full[0].message
        plain = reportschema._plain(data)
        try:
            reportschema._check_nesting_and_text(data, 'r.json')
            walked = True
        except ClusterbenchError:
            walked = False
        assert not plain or walked
        if full or not walked:
            refused += 1
            with pytest.raises(ClusterbenchError, match='^r.json: '):
                runreport.validate(data, 'r.json')
        else:
            runreport.validate(data, 'r.json')
    assert refused > 50  # the mutations do break reports


@pytest.mark.parametrize('leaf', ['x', '\ud800', 1.5, float('nan'), None, [], {}])
@pytest.mark.parametrize('under', ['perfvalues', 'other'])
def test_the_fast_walk_agrees_with_the_full_walk_at_the_depth_limit(leaf, under):
    for depth in range(reportschema.MAX_DEPTH - 2, reportschema.MAX_DEPTH + 3):
        data = {under: [leaf, 'y']}
        for _ in range(depth - 2):
            data = [data]
        try:
            reportschema._check_nesting_and_text(data, 'r.json')
            walked = True
        except ClusterbenchError:
            walked = False
        assert reportschema._plain(data) == walked, (depth, leaf, under)

"""Shared test helpers: the recorded upstream outputs in ../shared/fixtures/."""

import os

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(os.path.dirname(PROJECT), 'shared', 'fixtures')


@pytest.fixture(scope='session')
def fixtures_dir():
    if not os.path.isdir(FIXTURES):
        pytest.skip(f'recorded benchmark outputs not found at {FIXTURES}')
    return FIXTURES


def read(path):
    with open(path) as f:
        return f.read()

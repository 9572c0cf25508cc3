"""Reading mpiprof profiles: validation, breakdown, histograms, cgsolver cross-check.

The profiles in tests/data/mpiprof/ were written by src/mpiprof for real runs
(cgsolver class S under Open MPI and MPICH, NPB CG class S under Open MPI),
next to the solver's own output.
"""

import json
import os
import subprocess
import sys

import pytest
from conftest import PROJECT, read

from clusterbench.bench import profile
from clusterbench.parsers import cgsolver

DATA = os.path.join(PROJECT, 'tests', 'data', 'mpiprof')


def data(name):
    return os.path.join(DATA, name)


@pytest.mark.parametrize(
    'stem', ['cgsolver.S.classic.openmpi', 'cgsolver.S.pipelined.mpich']
)
def test_cgsolver_counters_agree_with_the_profile(stem):
    prof = profile.load(data(f'{stem}.json'))
    result = cgsolver.parse(read(data(f'{stem}.out')))
    rows = profile.cross_check(prof, result)
    assert [name for name, *_ in rows] == list(profile.CGSOLVER_COUNTERS)
    assert all(ok for *_, ok in rows), rows
    assert sum(mine for name, mine, *_ in rows if name in ('isend', 'irecv')) > 0


def test_pipelined_run_counts_its_nonblocking_reductions():
    prof = profile.load(data('cgsolver.S.pipelined.mpich.json'))
    assert prof['functions']['MPI_Iallreduce']['calls']['sum'] == 120


def test_a_disagreeing_profile_is_reported():
    prof = profile.load(data('cgsolver.S.classic.openmpi.json'))
    result = cgsolver.parse(read(data('cgsolver.S.classic.openmpi.out')))
    prof['functions']['MPI_Isend']['calls']['sum'] -= 1
    bad = [row for row in profile.cross_check(prof, result) if not row[3]]
    assert bad == [('isend', 126, 125, False)]
    with pytest.raises(profile.ProfileError, match='no "mpi_counts"'):
        profile.cross_check(prof, {})


def test_summary_breakdown_and_histograms():
    prof = profile.load(data('cgsolver.S.classic.openmpi.json'))
    digest = profile.summary(prof)
    assert digest['nranks'] == 2
    assert digest['mpi_time_share'] == pytest.approx(profile.mpi_time_share(prof), 1e-5)
    assert 0 < digest['mpi_time_share'] < 1
    rows = profile.breakdown(prof)
    times = [r['time_mean_s'] for r in rows]
    assert times == sorted(times, reverse=True)
    assert sum(r['share_of_mpi'] for r in rows) == pytest.approx(1.0)
    isend = digest['functions']['MPI_Isend']
    assert (isend['calls'], isend['bytes']) == (126, 258048)
    # 126 halo messages of 2 KiB from each direction: bin 12 is [2 KiB, 4 KiB).
    assert digest['histograms']['p2p'][12] == 252
    assert sum(digest['histograms']['p2p']) == 252
    text = '\n'.join(profile.format_summary(digest))
    assert 'MPI time ' in text and '% of wall time over 2 ranks' in text
    assert '[2 KiB, 4 KiB)         252' in text
    json.dumps(digest)


def test_fortran_npb_profile():
    prof = profile.load(data('npb-cg.S.openmpi.json'))
    assert prof['fortran_calls']['sum'] == sum(
        f['calls']['sum'] for f in prof['functions'].values()
    )
    assert prof['functions']['MPI_Send']['calls']['sum'] == 3360


@pytest.mark.parametrize(
    'k, label',
    [
        (0, '0 B'),
        (1, '1 B'),
        (2, '[2 B, 4 B)'),
        (11, '[1 KiB, 2 KiB)'),
        (21, '[1 MiB, 2 MiB)'),
        (31, '[1 GiB, 2 GiB)'),
    ],
)
def test_bin_labels(k, label):
    assert profile.bin_label(k) == label


def broken(tmp_path, mutate):
    prof = json.loads(read(data('cgsolver.S.classic.openmpi.json')))
    mutate(prof)
    path = tmp_path / 'p.json'
    path.write_text(json.dumps(prof))
    return str(path)


@pytest.mark.parametrize(
    'mutate, message',
    [
        (
            lambda p: p.update(format='other/1'),
            "not an mpiprof profile (format 'other/1')",
        ),
        (lambda p: p.update(nranks=0), 'nranks=0, expected a positive count'),
        (lambda p: p['time'].pop('wall'), 'time.wall: expected numbers'),
        (
            lambda p: p['functions']['MPI_Isend']['calls'].pop('max'),
            'MPI_Isend.calls: expected numbers',
        ),
        (
            lambda p: p['functions']['MPI_Isend'].update(histogram='x'),
            'MPI_Isend.histogram: not a list of counts',
        ),
    ],
)
def test_malformed_profiles_give_one_line(tmp_path, mutate, message):
    path = broken(tmp_path, mutate)
    with pytest.raises(profile.ProfileError) as err:
        profile.load(path)
    assert str(err.value).startswith(f'{path}: ')
    assert message in str(err.value) and '\n' not in str(err.value)


def test_unreadable_profiles(tmp_path):
    with pytest.raises(profile.ProfileError, match='cannot read profile'):
        profile.load(str(tmp_path / 'none.json'))
    (tmp_path / 'torn.json').write_text('{"format": ')
    with pytest.raises(profile.ProfileError, match=r'torn.json:1: not JSON'):
        profile.load(str(tmp_path / 'torn.json'))


def run_cli(*args):
    return subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.profile', *args],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
    )


def test_cli_show_and_check(tmp_path):
    show = run_cli('show', data('cgsolver.S.pipelined.mpich.json'))
    assert show.returncode == 0
    assert 'MPI_Iallreduce' in show.stdout and 'message sizes, p2p' in show.stdout
    check = run_cli(
        'check',
        data('cgsolver.S.classic.openmpi.json'),
        data('cgsolver.S.classic.openmpi.out'),
    )
    assert check.returncode == 0
    assert check.stdout.count(' ok\n') == len(profile.CGSOLVER_COUNTERS)
    wrong = run_cli(
        'check',
        data('cgsolver.S.classic.openmpi.json'),
        data('cgsolver.S.pipelined.mpich.out'),
    )
    assert wrong.returncode == 1 and 'MISMATCH' in wrong.stdout
    bad = run_cli('show', str(tmp_path / 'missing.json'))
    assert bad.returncode == 2
    assert bad.stderr.strip().count('\n') == 0

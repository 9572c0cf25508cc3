"""The ``local`` system sets OPENBLAS_CORETYPE when OpenBLAS runs a generic
kernel on a CPU that offers more, and a portable DGEMM or HPL figure that
fails names that cause (clusterbench.machine.blascore)."""

import json
import os
import runpy
import subprocess
import sys

import pytest
from conftest import PROJECT
from rfm import CG_CHECKS, TINY_CG, reframe

from clusterbench.judging import verdict
from clusterbench.machine import blascore, digest
from clusterbench.results import details, portable, runreport

EMERALD_RAPIDS = os.path.join(PROJECT, 'tests', 'data', 'sessions', 'Intel-6-207')
LOCAL = os.path.join(PROJECT, 'site_configs', 'local.py')
AVX512 = frozenset({'sse3', 'avx', 'avx2', 'fma', 'avx512f'})
AVX2 = frozenset({'sse3', 'avx', 'avx2', 'fma'})
FLAGS = blascore.cpu_flags()
REAL_AVX2 = pytest.mark.skipif(
    blascore.openblas_core() is None or 'avx2' not in FLAGS,
    reason='needs libopenblas and a CPU with AVX2',
)


@pytest.mark.parametrize(
    'core, flags, expected',
    [
        ('Prescott', AVX512, 'SkylakeX'),
        ('Core2', AVX2, 'Haswell'),
        ('KATMAI', AVX512, 'SkylakeX'),
        ('Prescott', frozenset({'sse3', 'avx'}), None),  # nothing better
        ('SkylakeX', AVX512, None),
        ('Haswell', AVX512, None),  # not generic: the build's own choice
        ('Zen', AVX512, None),
        (None, AVX512, None),  # no libopenblas
    ],
)
def test_the_coretype_to_set(core, flags, expected):
    assert blascore.coretype_for(core, flags) == expected


def test_a_users_own_coretype_wins():
    assert blascore.local_setting({}, 'Prescott', AVX512) == ('Prescott', 'SkylakeX')
    assert (
        blascore.local_setting({'OPENBLAS_CORETYPE': 'Haswell'}, 'Prescott', AVX512)
        is None
    )
    assert blascore.note('Prescott', 'SkylakeX') == (
        'OpenBLAS core Prescott is generic on this CPU: local sets '
        'OPENBLAS_CORETYPE=SkylakeX'
    )


def _local_config(**env):
    saved = os.environ.get('OPENBLAS_CORETYPE')
    os.environ.pop('OPENBLAS_CORETYPE', None)
    os.environ.update(env)
    try:
        return runpy.run_path(LOCAL)['site_configuration']
    finally:
        os.environ.pop('OPENBLAS_CORETYPE', None)
        if saved is not None:
            os.environ['OPENBLAS_CORETYPE'] = saved


def _coretype_of(environ):
    return dict(map(tuple, environ['env_vars'])).get('OPENBLAS_CORETYPE')


def test_the_local_system_sets_the_coretype_of_this_machine():
    core = blascore.openblas_core()
    expected = blascore.coretype_for(core, FLAGS)
    config = _local_config()
    assert [_coretype_of(e) for e in config['environments']] == [expected] * 2
    descr = config['systems'][0]['partitions'][0]['descr']
    assert (blascore.note(core, expected) in descr) == bool(expected)
    # The user's own choice: local adds none.
    config = _local_config(OPENBLAS_CORETYPE='Haswell')
    assert [_coretype_of(e) for e in config['environments']] == [None] * 2


def test_the_production_configs_set_no_coretype():
    for name in ('box.py', 'example-site.py'):
        with open(os.path.join(PROJECT, 'site_configs', name)) as f:
            assert 'blascore' not in f.read(), name


def _core_under(coretype):
    env = {**os.environ, 'OPENBLAS_CORETYPE': coretype, 'OPENBLAS_NUM_THREADS': '1'}
    code = blascore._CORENAME
    done = subprocess.run(
        [sys.executable, '-c', code], env=env, capture_output=True, text=True
    )
    return done.stdout.strip()


@REAL_AVX2
def test_the_setting_takes_effect_in_the_real_library():
    # The real OpenBLAS of this host obeys both the set core and the fault.
    target = 'SkylakeX' if 'avx512f' in FLAGS else 'Haswell'
    assert _core_under(target) == target
    assert _core_under('Prescott') == 'Prescott'


@pytest.mark.integration
@REAL_AVX2
def test_a_forced_generic_kernel_reaches_the_job_and_is_named(tmp_path):
    # The fault: a user forces Prescott. It wins over local's setting, the
    # job's node facts record it, and with those facts the stored Emerald
    # Rapids session's DGEMM (a real one needs HPL N >= 8000: minutes) fails
    # naming OpenBLAS.
    rc, out, report = reframe(
        tmp_path, *TINY_CG, env={'OPENBLAS_CORETYPE': 'Prescott'}, checks=CG_CHECKS
    )
    assert rc == 0, out
    (case,) = [c for c in runreport.cases(report) if not c.get('fixture')]
    (facts,) = case['node_facts'].values()
    assert (facts['openblas_core'], facts['openblas_coretype']) == ('Prescott',) * 2
    data = _session('SkylakeX')
    for case in runreport.cases(data):
        case['node_facts'] = {'vm': facts}
    found = _failed(data)['dgemm_peak_efficiency']
    assert (found.kind, found.detail) == (
        verdict.WORSE,
        'OpenBLAS chose its generic Prescott kernel: set OPENBLAS_CORETYPE',
    )


def _session(core):
    """The stored Emerald Rapids session (OpenBLAS on Prescott: DGEMM at 18 %
    of a core's peak), its node facts naming *core*."""
    with open(os.path.join(EMERALD_RAPIDS, 'report.json')) as f:
        data = json.load(f)
    for case in runreport.cases(data):
        case['node_facts'] = {'vm': {'host': 'vm', 'openblas_core': core}}
    return data


def _failed(data):
    figures, _ = runreport.extract(data, 'report.json')
    _, derived = portable.split(data, 'report.json', figures)
    return {
        j.variable: j.verdict for j in portable.judge(derived) if j.kind != verdict.PASS
    }


def test_a_failed_dgemm_names_the_generic_openblas_kernel():
    cause = 'OpenBLAS chose its generic Prescott kernel: set OPENBLAS_CORETYPE'
    assert _failed(_session('Prescott')) == {
        'dgemm_peak_efficiency': verdict.Verdict(verdict.WORSE, cause),
        'hpl_peak_efficiency': verdict.Verdict(verdict.WORSE, cause),
    }
    # Another kernel: the same failures, no cause claimed.
    assert _failed(_session('SkylakeX')) == {
        'dgemm_peak_efficiency': verdict.WORSE,
        'hpl_peak_efficiency': verdict.WORSE,
    }


def test_the_node_digest_shows_the_core_and_the_setting():
    facts = {
        'software': {
            'blas': {
                'openblas': '0.3.21',
                'openblas_core': 'SkylakeX',
                'openblas_coretype': 'SkylakeX',
            }
        }
    }
    line = digest.format_software(digest.summary(facts))
    assert line.endswith('OpenBLAS 0.3.21 (core SkylakeX, OPENBLAS_CORETYPE=SkylakeX)')


def test_the_session_digest_says_the_kernel_was_set(tmp_path):
    data = _session('SkylakeX')
    for case in runreport.cases(data):
        case['node_facts']['vm']['openblas_coretype'] = 'SkylakeX'
    path = tmp_path / 'report.json'
    path.write_text(json.dumps(data))
    line = details.digest([str(path)])
    assert 'OpenBLAS kernels set by OPENBLAS_CORETYPE=SkylakeX' in line


@pytest.mark.integration
@REAL_AVX2
@pytest.mark.skipif('OPENBLAS_CORETYPE' in os.environ, reason='the user chose a core')
def test_the_local_system_sets_the_kernel_of_a_real_job(tmp_path):
    own = blascore.openblas_core()
    target = blascore.coretype_for(own, FLAGS)
    rc, out, report = reframe(tmp_path, *TINY_CG, checks=CG_CHECKS)
    assert rc == 0, out
    (case,) = [c for c in runreport.cases(report) if not c.get('fixture')]
    (facts,) = case['node_facts'].values()
    # On a CPU OpenBLAS knows, nothing is set and its own choice stands.
    assert (facts['openblas_core'], facts['openblas_coretype']) == (
        target or own,
        target,
    )


def test_no_openblas_sets_nothing(monkeypatch):
    # As where libopenblas does not load: the child fails, the config loads.
    monkeypatch.setattr(
        blascore, '_CORENAME', 'import ctypes; ctypes.CDLL("libnone.so")'
    )
    assert blascore.openblas_core() is None
    assert blascore.local_setting({}, flags=AVX512) is None

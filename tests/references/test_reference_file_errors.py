"""A malformed reference file fails its tests, in plain ReFrame and in
`clusterbench run`, naming file and line; it never makes them vanish
(issue 20, item 1)."""

import os
import shutil
import subprocess

import pytest
from conftest import PROJECT
from rfm import only_case, reframe, tool

pytestmark = pytest.mark.integration

TINY = ('-n', '^HPCCCheck$', '-S', 'hpl_n=960', '-S', 'hpl_nb=96')
HPL = '      hpl: [86.65, -0.37, 0.37, GFlop/s]\n'
#: The test's own local/hpcc.yaml (the project's changes with every re-recording):
#: line 11 is the hpl entry.
HPCC = (
    '# A reference file of this test.\n#\n#\n'
    'HPCCCheck:\n'
    '  $index: [$partition, $environ]\n'
    '  local:default:\n'
    '    gnu-openmpi:\n'
    '      dgemm_star: [50.0, -0.1, 0.1, GFlop/s]\n'
    '      dgemm_single: [50.0, -0.1, 0.1, GFlop/s]\n'
    '      mpifft: [4.8, -0.2, 0.2, GFlop/s]\n'
    + HPL
    + '      stream_star_copy: [18.35, -0.26, 0.26, GB/s]\n'
)

# What is broken on line 11 of the test's hpcc.yaml (the hpl entry), and what
# the line says about it.
BROKEN = {
    'bracket': (
        HPL.replace('GFlop/s]', 'GFlop/s'),
        "hpcc.yaml:11: YAML error: while parsing a flow sequence: expected ',' "
        "or ']', but got ':' (line 12)",
    ),
    'type': (
        HPL.replace('86.65', 'fast'),
        'hpcc.yaml:11: HPCCCheck > local:default > gnu-openmpi > hpl: reference '
        "'fast' is not a number",
    ),
    'threshold': (
        HPL.replace('-0.37', '0.5'),
        'hpl: lower threshold 0.5 must be a number <= 0 or null',
    ),
    # A byte that is not UTF-8 (surrogateescape writes it as 0xff).
    'encoding': (HPL.replace('GFlop/s', 'GFlop\udcff'), 'hpcc.yaml:11: not UTF-8 text'),
}


def broken_copy(tmp_path, what):
    refs = tmp_path / 'refs'
    shutil.copytree(os.path.join(PROJECT, 'reference_data'), refs)
    lines = HPCC.splitlines(keepends=True)
    assert lines[10] == HPL
    lines[10] = BROKEN[what][0]
    (refs / 'local' / 'hpcc.yaml').write_bytes(
        ''.join(lines).encode(errors='surrogateescape')
    )
    return refs


@pytest.mark.parametrize('what', sorted(BROKEN))
def test_plain_reframe_fails_the_test_in_setup(tmp_path, what):
    refs = broken_copy(tmp_path, what)
    rc, out, report = reframe(
        tmp_path / 'run', *TINY, env={'RFM_REFERENCE_PREFIX': str(refs)}
    )
    assert rc != 0, out
    assert 'skipping test' not in out
    case = only_case(report)
    assert case['fail_phase'] == 'setup'
    assert case['fail_reason'].startswith(
        f'reference parse error: {refs}/local/hpcc.yaml:11: '
    )
    assert case['fail_reason'].endswith(BROKEN[what][1])
    assert f'Reason: reference parse error: {refs}/local/hpcc.yaml:11: ' in out
    assert 'Traceback' not in out


def test_the_project_file_is_named_relative_to_the_project(tmp_path):
    # Without RFM_REFERENCE_PREFIX the checks read reference_data/ beside
    # reframe_checks/: a copy of both shows the path as a user types it.
    tree = tmp_path / 'tree'
    tree.mkdir()
    shutil.copytree(os.path.join(PROJECT, 'reframe_checks'), tree / 'reframe_checks')
    refs = broken_copy(tree, 'bracket')
    refs.rename(tree / 'reference_data')
    env = {**os.environ, 'PYTHONPATH': PROJECT}
    env.pop('RFM_REFERENCE_PREFIX', None)
    result = subprocess.run(
        [
            tool('reframe'),
            '-C',
            os.path.join(PROJECT, 'site_configs', 'local.py'),
            '-c',
            'reframe_checks/hpcc.py',
            '--prefix',
            str(tmp_path / 'run'),
            '--nocolor',
            *TINY,
            '-r',
        ],
        capture_output=True,
        text=True,
        cwd=tree,
        timeout=600,
        env={**env, 'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db')},
    )
    assert result.returncode != 0
    assert (
        f'Reason: reference parse error: reference_data/local/{BROKEN["bracket"][1]}'
        in (result.stdout)
    )

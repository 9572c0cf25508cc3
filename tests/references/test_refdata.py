"""Reference files: the project's own validate, malformed ones name file and line."""

import os

import pytest
from conftest import PROJECT
from rfm import clusterbench

from clusterbench.references import directory as refdir
from clusterbench.references import validate as refdata

GOOD = """\
HPCCCheck:
  $index: [$partition, $environ, $processor.model]
  'local:default':
    gnu-openmpi:
      'AMD EPYC':
        hpl: [90.0, -0.1, 0.1, 'GFlop/s']
        pingpong_latency_min: [0.3, null, 0.5, 'us']
        mpifft: ['$xfail', 'known slow FFT', [8.0, -0.2, 0.2, 'GFlop/s']]
PlainCheck:
  'box:cpu':
    bandwidth: [12, -0.05, 0.05, 'GB/s']
"""


def write(tmp_path, text, name='refs.yaml'):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_project_reference_files_are_valid():
    results = refdata.check_directory(os.path.join(PROJECT, 'reference_data'))
    assert results, 'reference_data/ holds no reference file'
    assert all(sum(tests.values()) > 0 for tests in results.values())


def test_good_file_counts_figures(tmp_path):
    assert refdata.check_file(write(tmp_path, GOOD)) == {
        'HPCCCheck': 3,
        'PlainCheck': 1,
    }


@pytest.mark.parametrize(
    'old, new, message',
    [
        (
            "[90.0, -0.1, 0.1, 'GFlop/s']",
            "['fast', -0.1, 0.1, 'GFlop/s']",
            r'refs.yaml:6: HPCCCheck > local:default > gnu-openmpi > AMD EPYC > hpl: '
            r"reference 'fast' is not a number",
        ),
        (
            "[90.0, -0.1, 0.1, 'GFlop/s']",
            "[90.0, 0.1, 0.1, 'GFlop/s']",
            r'refs.yaml:6: .*lower threshold 0.1 must be a number <= 0',
        ),
        (
            "[90.0, -0.1, 0.1, 'GFlop/s']",
            "[90.0, -0.1, -0.2, 'GFlop/s']",
            r'refs.yaml:6: .*upper threshold -0.2',
        ),
        (
            "[90.0, -0.1, 0.1, 'GFlop/s']",
            "[90.0, -0.1, 0.1, 'furlongs']",
            r"refs.yaml:6: .*unknown unit 'furlongs'",
        ),
        (
            # A figure no benchmark declares is never recorded: a typo.
            'hpl: [90.0',
            'hlp: [90.0',
            r"refs.yaml:6: HPCCCheck > .* > hlp: figure 'hlp' is declared by no "
            r'benchmark',
        ),
        (
            # Declared, but recorded in another unit: it would never match.
            "[90.0, -0.1, 0.1, 'GFlop/s']",
            "[90.0, -0.1, 0.1, 'MFlop/s']",
            r"refs.yaml:6: .* > hpl: unit 'MFlop/s' of 'hpl': it is declared in "
            r"'GFlop/s'",
        ),
        (
            "[90.0, -0.1, 0.1, 'GFlop/s']",
            '[90.0, -0.1]',
            r'refs.yaml:6: .*expected \[reference, lower, upper, unit\]',
        ),
        (
            "[90.0, -0.1, 0.1, 'GFlop/s']",
            '90.0',
            r'refs.yaml:6: .*expected \[reference, lower, upper, unit\]',
        ),
        (
            '$index: [$partition, $environ, $processor.model]',
            '$index: [$nonsense]',
            r'refs.yaml:2: HPCCCheck > \$index: \$index must list',
        ),
        (
            "bandwidth: [12, -0.05, 0.05, 'GB/s']",
            "bandwidth: [12, -0.05, 0.05, 'GB/s'",
            r'refs.yaml:11: YAML error: while parsing a flow sequence: .* \(line 12\)',
        ),
        (
            "    bandwidth: [12, -0.05, 0.05, 'GB/s']",
            '    - 12',
            r'refs.yaml:11: PlainCheck > box:cpu: expected a mapping of figures',
        ),
    ],
)
def test_malformed_entries_name_file_line_and_key(tmp_path, old, new, message):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(refdata.ReferenceFileError, match=message):
        refdata.check_file(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(refdata.ReferenceFileError, match='nope.yaml: cannot read'):
        refdata.check_file(str(tmp_path / 'nope.yaml'))
    with pytest.raises(refdata.ReferenceFileError, match='no such reference directory'):
        refdata.check_directory(str(tmp_path / 'nodir'))


def test_top_level_must_be_tests(tmp_path):
    with pytest.raises(
        refdata.ReferenceFileError, match='refs.yaml:1: expected a mapping'
    ):
        refdata.check_file(write(tmp_path, '- 1\n- 2\n'))


def test_exponent_without_sign_is_text_in_yaml(tmp_path):
    path = write(tmp_path, GOOD.replace('[90.0, -0.1', '[9.0e1, -0.1'))
    with pytest.raises(refdata.ReferenceFileError, match=r'write 1.0e\+6'):
        refdata.check_file(path)


def test_no_stale_references_in_the_project():
    root = os.path.join(PROJECT, 'reference_data')
    assert 'local' in refdir.systems(root)
    for system in refdir.systems(root):
        problems = refdata.stale_entries(
            os.path.join(root, system),
            os.path.join(PROJECT, 'site_configs'),
            os.path.join(PROJECT, 'reframe_checks'),
        )
        assert problems == []


def test_stale_entries_are_named(tmp_path):
    (tmp_path / 'local').mkdir()
    (tmp_path / 'local' / 'r.yaml').write_text(
        'HPCCCheck:\n'
        '  $index: [$partition, $environ]\n'
        "  'local:default':\n"
        '    gnu-oldmpi:\n'
        "      hpl: [1, -0.1, 0.1, 'GFlop/s']\n"
        "  'atlantis:cpu':\n"
        '    gnu-openmpi:\n'
        "      hpl: [1, -0.1, 0.1, 'GFlop/s']\n"
        'GoneCheck:\n'
        "  'local:default':\n"
        "    x: [1, -0.1, 0.1, 'GB/s']\n"
    )
    problems = refdata.stale_entries(
        str(tmp_path / 'local'),
        os.path.join(PROJECT, 'site_configs'),
        os.path.join(PROJECT, 'reframe_checks'),
    )
    assert [p.split(': ', 1)[1] for p in problems] == [
        "HPCCCheck > local:default > gnu-oldmpi: environ 'gnu-oldmpi' is in no "
        'site config',
        "HPCCCheck > atlantis:cpu: partition 'atlantis:cpu' is not of system "
        f"'local': ReFrame never reads it here; its references belong in "
        f'{tmp_path}/atlantis/',
        'GoneCheck: no such check in ' + os.path.join(PROJECT, 'reframe_checks') + '/',
    ]
    assert problems[0].startswith(f'{tmp_path}/local/r.yaml:4:')


def test_references_of_another_system_or_of_no_system_are_stale(tmp_path):
    # box is a system of the site configs, but its partitions are not found
    # in local's directory; atlantis is none.
    for system in ('local', 'atlantis'):
        (tmp_path / system).mkdir()
    (tmp_path / 'local' / 'r.yaml').write_text(
        "HPCCCheck:\n  'box:cpu':\n    hpl: [1, -0.1, 0.1, 'GFlop/s']\n"
    )
    (tmp_path / 'atlantis' / 'r.yaml').write_text(
        "HPCCCheck:\n  'atlantis:cpu':\n    hpl: [1, -0.1, 0.1, 'GFlop/s']\n"
    )
    result = clusterbench('references', 'check', str(tmp_path))
    assert result.returncode == 1, result.stderr
    stale = [line for line in result.stdout.splitlines() if line.startswith('stale:')]
    assert stale == [
        f"stale: {tmp_path}/atlantis: system 'atlantis' is in no site config",
        f'stale: {tmp_path}/atlantis/r.yaml:2: HPCCCheck > atlantis:cpu: partition '
        "'atlantis:cpu' is in no site config",
        f'stale: {tmp_path}/local/r.yaml:2: HPCCCheck > box:cpu: partition '
        "'box:cpu' is not of system 'local': ReFrame never reads it here; its "
        f'references belong in {tmp_path}/box/',
    ]


def test_a_reference_file_outside_every_system_directory_is_named(tmp_path):
    (tmp_path / 'local').mkdir()
    (tmp_path / 'hpcc.yaml').write_text(GOOD)
    result = clusterbench('references', 'check', str(tmp_path))
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f'clusterbench: error: {tmp_path}/hpcc.yaml: outside every system '
        f'directory, ReFrame never reads it: move it to {tmp_path}/<system>/hpcc.yaml'
    ]


WIDE = """\
HPCCCheck:
  $index: [$partition, $environ]
  'local:default':
    gnu-openmpi:
      hpl: [88.9, -0.37, 0.37, GFlop/s]
      dgemm_star: [50.0, -0.05, null, GFlop/s]
      mpifft: [5.0, -0.05, 0.5, GFlop/s]
      pingpong_latency_min: [0.2, -0.5, 0.05, us]
      ring_natural_latency: [0.2, -0.05, 0.2, us]
CGSolverCheck:
  $index: [$partition]
  'local:default':
    iterations: [350.0, -0.2, 0.03, iterations]
"""


def test_tolerances_too_wide_to_flag_a_regression_are_named(tmp_path):
    (tmp_path / 'local').mkdir()
    path = tmp_path / 'local' / 'x.yaml'
    path.write_text(WIDE)
    found = refdata.wide_tolerances(str(tmp_path / 'local'))
    # Only the bad side counts: a wide band on the good side hides nothing.
    assert found == [
        f'{path}:5: HPCCCheck > local:default > gnu-openmpi > hpl: ±37 %: '
        'a 10 % regression cannot be flagged',
        f'{path}:9: HPCCCheck > local:default > gnu-openmpi > '
        'ring_natural_latency: -5 %/+20 %: a 10 % regression cannot be flagged',
        f'{path}:13: CGSolverCheck > local:default > iterations: -20 %/+3 %: '
        'a 10 % regression cannot be flagged',
    ]
    assert len(refdata.wide_tolerances(str(path.parent), threshold=0.4)) == 0
    result = clusterbench(
        'references', 'check', str(tmp_path), '--max-tolerance', '0.3'
    )
    quiet = clusterbench('references', 'check', str(tmp_path), '--max-tolerance', '1')
    # Warnings alone never change the exit status (here: 1, for the entries
    # that have no provenance).
    assert 'warning: ' not in quiet.stdout
    assert result.returncode == quiet.returncode, result.stderr
    assert result.stdout.count('warning: ') == 1
    assert 'hpl: ±37 %: a 30 % regression cannot be flagged' in result.stdout

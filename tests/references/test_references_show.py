"""`clusterbench references show`: every figure's band and its source, run as
a user types it, on the shipped reference_data/ and on a crafted directory."""

import csv
import io
import json
import textwrap

from rfm import clusterbench

from clusterbench.parsers import catalog
from clusterbench.references import validate as refdata

REFERENCES = textwrap.dedent("""\
    CGSolverCheck:
      $index: [$partition, $environ, cpu_kind, ranks_per_node]
      mysys:cpu:
        gnu:
          X-1-2:
            '1':
              gflops: [100.0, -0.05, 0.05, GFlop/s]
              time: [10.0, -0.5, 0.5, s]
              iterations: [50.0, -0.03, 0.03, iterations]
    """)
PROVENANCE = textwrap.dedent("""\
    CGSolverCheck:
      mysys:cpu/gnu/X-1-2/1:
      - made: '2026-11-21T10:00:00+00:00'
        reports: [mysys/20261118T090000/report.json,
                  mysys/20261120T090000/report.json,
                  mysys/20261119T090000/report.json]
        sessions: [a, b, c]
        figures:
          gflops: {session_medians: [99.0, 100.0, 101.0]}
          time: {session_medians: [8.0, 10.0, 12.0]}
          iterations: {session_medians: [50.0, 50.0, 50.0]}
    """)
SITE = textwrap.dedent("""\
    site_configuration = {'systems': [{'name': 'mysys', 'partitions': [
        {'name': 'cpu', 'extras': {'portable_bands': %s}}]}]}
    """)


def crafted(tmp_path, bands="{'hpl_peak_efficiency': [70, 95]}"):
    refs = tmp_path / 'refs'
    (refs / 'mysys' / 'provenance').mkdir(parents=True)
    (refs / 'mysys' / 'cgsolver.yaml').write_text(REFERENCES)
    (refs / 'mysys' / 'provenance' / 'cgsolver.yaml').write_text(PROVENANCE)
    # A reference nobody recorded: its source says so.
    (refs / 'mysys' / 'hpl.yaml').write_text(
        "HPLCheck:\n  'mysys:cpu':\n    hpl: [50.0, -0.2, 0.2, GFlop/s]\n"
    )
    sites = tmp_path / 'sites'
    sites.mkdir()
    (sites / 'mysys.py').write_text(SITE % bands)
    return refs, sites


def show(*args):
    return clusterbench('references', 'show', *args)


def one_line_error(result, *fragments):
    assert result.returncode == 2, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and 'Traceback' not in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_crafted_directory_as_csv(tmp_path):
    refs, sites = crafted(tmp_path)
    result = show('--references', str(refs), '--site-configs', str(sites),
                  '--format', 'csv')  # fmt: skip
    assert result.returncode == 0, result.stderr
    # CSV stays the table alone; the directory is said on stderr.
    assert result.stderr.strip() == f'references: {refs} (--references)'
    rows = {
        (r['test'], r['figure'], r['source']): r
        for r in csv.DictReader(io.StringIO(result.stdout))
    }
    gflops = rows['CGSolverCheck ranks_per_node=1', 'gflops', 'sessions']
    assert gflops['system'] == 'mysys:cpu' and gflops['cpu_kind'] == 'X-1-2'
    # The solver's rates are declared memory-bound, and so is its time.
    assert (gflops['reference'], gflops['band'], gflops['figure_class']) == (
        '100.0',
        '±5 %',
        'memory-bound',
    )
    assert (gflops['sessions'], gflops['dates']) == ('3', '2026-11-18..2026-11-20')
    assert float(gflops['spread']) == 0.0148  # 1.4826 x MAD 1 / median 100
    assert gflops['note'] == ''
    time = rows['CGSolverCheck ranks_per_node=1', 'time', 'sessions']
    assert (time['band'], time['figure_class']) == ('±50 %', 'memory-bound')
    iterations = rows['CGSolverCheck ranks_per_node=1', 'iterations', 'sessions']
    assert iterations['figure_class'] == '1-rank'
    assert time['note'] == 'wide: the sessions lay -20..+20 % from it'
    hpl = rows['HPLCheck', 'hpl', 'no provenance']
    assert (hpl['figure_class'], hpl['sessions'], hpl['spread']) == (
        'compute-bound',
        '',
        '',
    )
    assert hpl['note'] == 'wide: no spread between sessions recorded'
    override = rows['', 'hpl_peak_efficiency', 'site override']
    assert (override['system'], override['band']) == ('mysys:cpu', '70..95 %')
    assert override['where'] == str(sites / 'mysys.py')
    portable = {f for _, f, s in rows if s == 'portable default'}
    assert portable == {f.name for f in catalog.CATALOG.portable()}


def test_crafted_directory_as_text(tmp_path):
    refs, sites = crafted(tmp_path)
    result = show('--references', str(refs), '--site-configs', str(sites))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f'references: {refs} (--references)'
    assert 'mysys:cpu, gnu, CPU X-1-2' in lines
    assert (
        '  CGSolverCheck ranks_per_node=1: 3 sessions, 2026-11-18..2026-11-20 '
        '(mysys/provenance/cgsolver.yaml)'
    ) in lines
    (time,) = [line for line in lines if line.startswith('    time ')]
    assert time.split()[1:6] == ['10', 's', '±50', '%', 'memory-bound']
    assert time.endswith('wide: the sessions lay -20..+20 % from it')
    assert (
        'CPU X-1-2: 3 reference figure(s), 1 with a band wider than ±10 % on its '
        'bad side (compute-bound and 1-rank: 0 of 1; memory-bound, named with '
        'their spread: 1 of 2)'
    ) in lines
    assert (
        'any CPU: 1 reference figure(s), 1 with a band wider than ±10 % on its '
        'bad side (compute-bound and 1-rank: 1 of 1)'
    ) in lines


def test_system_filter_and_bad_input(tmp_path):
    refs, sites = crafted(tmp_path)
    common = ('--references', str(refs), '--site-configs', str(sites))
    result = show(*common, '--system', 'mysys:cpu', '--format', 'json')
    assert result.returncode == 0, result.stderr
    assert {r['system'] for r in json.loads(result.stdout)} == {'mysys:cpu', '*'}
    one_line_error(
        show(*common, '--system', 'atlantis'),
        f"{refs}: no references of 'atlantis' (systems with references: mysys)",
    )
    one_line_error(show(*common, '--system', 'mysys:gpu'), "'mysys:gpu'")
    # A system without references still shows its own portable bands.
    (sites / 'other.py').write_text(
        (SITE % "{'hpl_dgemm_efficiency': [50, 99]}").replace('mysys', 'other')
    )
    result = show(*common, '--system', 'other', '--format', 'json')
    assert result.returncode == 0, result.stderr
    (override,) = [r for r in json.loads(result.stdout) if r['system'] != '*']
    assert (override['system'], override['figure'], override['band']) == (
        'other:cpu',
        'hpl_dgemm_efficiency',
        '50..99 %',
    )
    one_line_error(show(*common, '--system', 'a b'), "--system 'a b'")
    (refs / 'mysys' / 'bad.yaml').write_text(
        "T:\n  's:p':\n    bandwidth: [one, -0.1, 0.1, 'GB/s']\n"
    )
    one_line_error(show(*common), f'{refs}/mysys/bad.yaml:3', "'one' is not a number")


def test_a_site_config_that_does_not_load_is_one_line(tmp_path):
    refs, sites = crafted(tmp_path)
    (sites / 'broken.py').write_text("raise RuntimeError('half-edited')\n")
    one_line_error(
        show('--references', str(refs), '--site-configs', str(sites)),
        f'{sites}/broken.py: cannot load: half-edited',
    )


def test_a_bad_site_override_is_one_line(tmp_path):
    refs, sites = crafted(tmp_path, bands="{'hpl': [1, 2]}")
    one_line_error(
        show('--references', str(refs), '--site-configs', str(sites)),
        f'{sites}/mysys.py: mysys:cpu: portable_bands',
        "'hpl' is no portable figure",
    )


def test_shipped_references():
    result = show('--format', 'json')
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    # A band wider than ±100 % is shipped as context only (its provenance):
    # NetPIPE's of AMD-25-17 (tests/references/test_rule_of_three.py).
    context = [r for r in rows if r['note'].startswith('context only')]
    assert len(context) == 8 and {r['band'] for r in context} == {''}
    refs = [r for r in rows if r['reference'] is not None and r not in context]
    # One row per figure of every shipped reference, all with their sessions.
    counts = refdata.check_directory('reference_data')
    assert len(refs) == sum(sum(tests.values()) for tests in counts.values())
    assert {r['source'] for r in refs} == {'sessions'}
    # Wide as `references check` warns: the same figures, named with their spread.
    wide = [r for r in refs if r['note'].startswith('wide')]
    assert len(wide) == len(refdata.wide_tolerances('reference_data/local'))
    assert all(r['spread'] is not None for r in wide)
    (hpl,) = [r for r in refs if r['figure'] == 'hpl' and 'AMD-25-17' == r['cpu_kind']]
    assert (hpl['band'], hpl['figure_class'], hpl['sessions']) == (
        '±11 %',
        'compute-bound',
        14,
    )
    assert hpl['dates'] == '2026-11-24'
    # Every portable band names the declaration that holds it.
    for row in (r for r in rows if r['source'] == 'portable default'):
        with open(row['where']) as declaration:
            assert repr(row['figure']) in declaration.read(), row

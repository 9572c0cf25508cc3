"""Portable figures judge themselves: their default bands pass the stored
healthy sessions of every CPU kind the project has data for and fail a fault."""

import copy
import json
import os

import pytest
from conftest import PROJECT
from rfm import clusterbench

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict
from clusterbench.parsers.catalog import CATALOG
from clusterbench.references import provenance as refprov
from clusterbench.results import guide, portable, runreport

ZEN3 = os.path.join(PROJECT, '..', 'shared', 'fixtures', 'sessions', 'AMD-25-1')
EMERALD_RAPIDS = os.path.join(PROJECT, 'tests', 'data', 'sessions', 'Intel-6-207')
PROVENANCE = os.path.join(PROJECT, 'reference_data', 'local', 'provenance')
HPCC = os.path.join(PROVENANCE, 'hpcc.yaml')
CGSOLVER = os.path.join(PROVENANCE, 'cgsolver.yaml')
#: The Zen 4 guests' clock as their cpuinfo reads it (../shared/README.md).
ZEN4_MHZ = 2600.0
PORTABLE = {
    'hpl_dgemm_efficiency',
    'hpl_peak_efficiency',
    'dgemm_peak_efficiency',
    'pingpong_copy_efficiency',
    'bandwidth_triad_efficiency',
}


def load(directory):
    with open(os.path.join(directory, 'report.json')) as f:
        return json.load(f)


def verdicts(data, path='report.json'):
    """{(test, environ, figure): verdict} of the portable rows of a report."""
    figures, _ = runreport.extract(data, path)
    _, derived = portable.split(data, path, figures)
    return {
        (j.test, j.environ, j.variable): j.verdict
        for j in portable.judge(derived)
        if j.variable in PORTABLE
    }


def _case(name, environ, values, units, **facts):
    return {
        'name': name,
        'display_name': name,
        'system': 'local',
        'partition': 'default',
        'environ': environ,
        'result': 'pass',
        'cpu_kind': 'AMD-25-17',
        'processor_facts': {'num_cpus': 2, 'num_cpus_per_core': 1},
        'run_conditions': {'mhz_before': ZEN4_MHZ},
        'perfvalues': {
            f'local:default:{k}': [v, 0, None, None, units[k], 'pass']
            for k, v in values.items()
        },
        **facts,
    }


def _zen4(entries):
    """The entries of AMD-25-17 (the files hold other CPU kinds too)."""
    return {k: v for k, v in entries.items() if '/AMD-25-17/' in k}


def zen4_sessions():
    """The 14 stored healthy sessions of AMD-25-17, rebuilt as run reports
    from the session medians their references were made from."""
    (hpcc,) = _zen4(refprov.records(refprov.load(HPCC))['HPCCCheck']).values()
    cg = _zen4(refprov.records(refprov.load(CGSOLVER))['CGSolverCheck'])
    reports = refprov.current(hpcc)['reports']
    sessions = []
    for i in range(len(reports)):
        figures = refprov.figures(hpcc)
        values = {k: v['session_medians'][i] for k, v in figures.items()}
        units = {k: v['reference'][3] for k, v in figures.items()}
        hpl_problem = {'n': 10368, 'nb': 192, 'p': 1, 'q': 2}
        cases = [
            _case('HPCCCheck', 'gnu-openmpi', values, units, num_tasks=2,
                  hpl_problem=hpl_problem)
        ]  # fmt: skip
        for where, entry in cg.items():
            environ, ranks = where.split('/')[1], where.split('/')[-1]
            figures = refprov.figures(entry)
            assert refprov.current(entry)['reports'] == reports  # the same sessions
            cases.append(
                _case(
                    f'CGSolverCheck %ranks_per_node={ranks} %where={where}',
                    environ,
                    {k: v['session_medians'][i] for k, v in figures.items()},
                    {k: v['reference'][3] for k, v in figures.items()},
                    num_tasks=1 if ranks == '1' else 2,
                    num_tasks_per_node=1 if ranks == '1' else 2,
                    problem_class='B',
                )
            )
        sessions.append({'session_info': {}, 'runs': [{'testcases': cases}]})
    return sessions


def test_default_bands_pass_a_quiet_zen3_session(fixtures_dir):
    found = verdicts(load(ZEN3))
    assert {name for _, _, name in found} == PORTABLE
    assert len(found) == 4 + 16
    assert set(found.values()) == {verdict.PASS}


def test_default_bands_pass_every_stored_zen4_session():
    sessions = zen4_sessions()
    assert len(sessions) == 14
    for data in sessions:
        found = verdicts(data)
        assert {name for _, _, name in found} == PORTABLE
        assert set(found.values()) == {verdict.PASS}, found


def test_a_generic_blas_kernel_is_named_on_emerald_rapids():
    # OpenBLAS 0.3.21 does not know this CPU (family 6 model 207) and falls
    # back to its Prescott (SSE3) kernels: DGEMM reaches 18 % of a core's
    # AVX-512 peak. Everything else of the session is healthy.
    found = verdicts(load(EMERALD_RAPIDS))
    failed = {k: v for k, v in found.items() if v != verdict.PASS}
    assert failed == {
        ('HPCCCheck', 'gnu-openmpi', 'dgemm_peak_efficiency'): verdict.WORSE,
        ('HPCCCheck', 'gnu-openmpi', 'hpl_peak_efficiency'): verdict.WORSE,
    }
    assert len(found) == 4 + 16


def _halve(data, *names):
    data = copy.deepcopy(data)
    for case in runreport.cases(data):
        for key, values in (case.get('perfvalues') or {}).items():
            if key.rsplit(':', 1)[1] in names:
                values[0] /= 2
    return data


def test_a_halved_dgemm_fails_its_bands(fixtures_dir):
    data = _halve(load(ZEN3), 'dgemm_single', 'dgemm_star')
    # As HPCC derives it from the halved StarDGEMM: twice the share.
    for case in runreport.cases(data):
        for key, values in (case.get('perfvalues') or {}).items():
            if key.endswith(':hpl_dgemm_efficiency'):
                values[0] *= 2
    found = verdicts(data)
    hpcc = {name: v for (test, _, name), v in found.items() if test == 'HPCCCheck'}
    assert hpcc['dgemm_peak_efficiency'] == verdict.WORSE
    # HPL cannot be faster than the DGEMM it is made of.
    assert hpcc['hpl_dgemm_efficiency'] == verdict.FASTER
    assert hpcc['hpl_peak_efficiency'] == verdict.PASS


def test_a_cg_solver_at_a_third_of_its_bandwidth_fails(fixtures_dir):
    data = load(ZEN3)
    for case in runreport.cases(data):
        for key, values in (case.get('perfvalues') or {}).items():
            if case['name'].startswith('CGSolverCheck') and key.endswith(':bandwidth'):
                values[0] /= 3
    cg = {k: v for k, v in verdicts(data).items() if k[0].startswith('CGSolver')}
    # The 27-point stencil (about 50 % of triad when healthy) falls below 30 %.
    assert verdict.WORSE in cg.values()


def test_a_toy_problem_yields_no_portable_figure(fixtures_dir):
    data = load(ZEN3)
    for case in runreport.cases(data):
        if case['name'] == 'HPCCCheck':
            case['hpl_problem']['n'] = 960
    found = verdicts(data)
    # HPCC's are gone, and with its triad the CG solver's; its recorded
    # portable figure says why it has no verdict.
    assert found == {
        ('HPCCCheck', 'gnu-openmpi', 'hpl_dgemm_efficiency'): verdict.Verdict(
            verdict.NO_REFERENCE, 'N=960: portable figures need N >= 8000'
        )
    }


def test_a_partition_can_declare_its_own_band_and_its_peak(fixtures_dir):
    data = load(ZEN3)
    hpcc = next(c for c in runreport.cases(data) if c['name'] == 'HPCCCheck')
    hpcc['portable_bands'] = {'hpl_peak_efficiency': [85, 95]}
    assert verdicts(data)[('HPCCCheck', 'gnu-openmpi', 'hpl_peak_efficiency')] == (
        verdict.WORSE
    )
    # Declared peak: 62.4 GF/s is 52 % of 120 GF/s.
    hpcc['portable_bands'] = {}
    hpcc['peak_gflops_per_node'] = 120.0
    figures, _ = runreport.extract(data, 'r')
    _, derived = portable.split(data, 'r', figures)
    (row,) = [f for f in derived if f.variable == 'hpl_peak_efficiency']
    assert row.value == pytest.approx(100 * 62.3948 / 120)


def test_a_bad_band_override_is_one_line(fixtures_dir):
    data = load(ZEN3)
    hpcc = next(c for c in runreport.cases(data) if c['name'] == 'HPCCCheck')
    hpcc['portable_bands'] = {'hpl_peak_efficiency': [95, 85]}
    with pytest.raises(ClusterbenchError, match=r'hpl_peak_efficiency: \[95, 85\]'):
        verdicts(data, 'x.json')
    hpcc['portable_bands'] = {'hpl': [1, 2]}
    with pytest.raises(ClusterbenchError, match="'hpl' is no portable figure"):
        verdicts(data, 'x.json')


def test_portable_rows_are_no_inconclusive_inside_a_wide_band(fixtures_dir):
    data = load(ZEN3)
    figures, _ = runreport.extract(data, 'r')
    _, derived = portable.split(data, 'r', figures)
    judged = portable.judge(derived)
    assert all(j.threshold is None for j in judged)


def test_compare_judges_portable_figures_and_exits_on_a_named_fault():
    args = (
        'compare',
        os.path.join(EMERALD_RAPIDS, 'report.json'),
        '--references',
        os.path.join(PROJECT, 'reference_data'),
    )
    done = clusterbench(*args, '--format', 'csv')
    assert done.returncode == 1, done.stderr
    rows = [line.split(',') for line in done.stdout.splitlines()]
    worse = {row[3] for row in rows if row[-1] == verdict.WORSE}
    assert worse == {'dgemm_peak_efficiency', 'hpl_peak_efficiency'}
    assert 'no references' not in done.stdout + done.stderr  # the table alone
    # This kind has references, made for other cases than this trimmed
    # session's: one line says so, never "no references for Intel-6-207".
    done = clusterbench(*args)
    assert done.returncode == 1, done.stderr
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith('no ')]
    assert line.startswith(
        'no figure of this run found a reference, although '
        f'{os.path.join(PROJECT, "reference_data")} has references for Intel-6-207'
    )


def test_a_kind_without_references_is_guided_to_make_them():
    # Below the table for a person: one line, then a few of context.
    references = os.path.join(PROJECT, 'reference_data')
    done = clusterbench(
        'compare', os.path.join(ZEN3, 'report.json'), '--references', references
    )
    lines = done.stdout.splitlines()
    (line,) = [ln for ln in lines if ln.startswith('no references for')]
    assert line == (
        f'no references for AMD-25-1 in {references} (there are for AMD-25-17, '
        'Intel-6-207): make them with: clusterbench baseline --system local'
    )
    context = lines[lines.index(line) + 1 :]
    assert context[0].startswith(
        'context, not a verdict: this run against the references of AMD-25-17'
    )
    # NetPIPE's bands of AMD-25-17 are shipped as context only (wider than
    # ±100 %: tests/references/test_rule_of_three.py): no reference to compare with.
    assert {ln.split()[0] for ln in context[1:3]} == {'HPCCCheck', 'CGSolverCheck'}
    assert context[3] == ''  # and no more


def test_guidance_only_where_no_figure_found_a_reference(tmp_path):
    judged = [
        verdict.Judged('T', 'local', 'default', 'e', 'hpl', 'GFlop/s', [1.0],
                       verdict.Reference(90.0, -0.1, 0.1)).judge()
    ]  # fmt: skip
    assert guide.lines(judged, [], 'reference_data') == []
    # A portable band that passes is no reference of this machine (issue 41).
    portable_only = [
        verdict.Judged('T', 'local', 'default', 'e', 'hpl_peak_efficiency', '%',
                       [70.0], verdict.Reference(70.0, -0.3, 0.3),
                       band=True).judge()
    ]  # fmt: skip
    assert portable_only[0].verdict == verdict.PASS
    (line,) = guide.lines(portable_only, [], str(tmp_path))
    assert line.startswith(f'no references for this machine in {tmp_path}: make')
    assert guide.nearest('AMD-25-1', {'AMD-25-17': [1], 'Intel-6-207': [1, 2]}) == (
        'AMD-25-17'
    )
    assert guide.nearest('Intel-6-143', {'AMD-25-17': [1], 'Intel-6-207': [1]}) == (
        'Intel-6-207'
    )


def test_the_portable_figures_page_lists_every_band():
    with open(os.path.join(PROJECT, 'docs', 'portable-figures.md')) as f:
        page = f.read()
    for figure in CATALOG.portable():
        row = f'| `{figure.name}` | {figure.band.lower:g} .. {figure.band.upper:g} % |'
        assert row in page, row


def test_a_directory_without_any_reference_says_how_to_make_them(tmp_path):
    data = load(EMERALD_RAPIDS)
    figures, _ = runreport.extract(data, 'r')
    judged = verdict.group(figures)
    lines = guide.lines(judged, runreport.cases(data), str(tmp_path))
    # The command carries the directory: it writes where this looked.
    assert lines == [
        f'no references for Intel-6-207 in {tmp_path}: make them with: '
        f'clusterbench baseline --system local --references {tmp_path}'
    ]

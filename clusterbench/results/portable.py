"""Portable verdicts: figures that judge themselves, on any machine.

A portable figure is an efficiency against a ceiling of the same node in the
same session: HPL against the node's peak and against DGEMM, DGEMM on one
core against a core's peak, the CG solver's bandwidth against STREAM triad,
a shared-memory PingPong against a copy in memory, a link's bandwidth against
its declared peak. Its range on a healthy machine is declared once, with its
source, as the default band of its declaration (``clusterbench.parsers``);
a partition may give its own (``extras.portable_bands``). Every run, compare
and replay judges them, with references or without: they are rows of the
same verdict table, each judged against its band alone (a band is wide by
design, so no INCONCLUSIVE inside it).

Verification (NPB's, the CG solver's, HPL's residual, STREAM's) needs no
band: a run that fails it yields no figure and is FAILED in every run.
"""

import dataclasses
import statistics

from clusterbench.judging import verdict
from clusterbench.machine import blascore, peak
from clusterbench.parsers import cgsolver, hpcc, hpl
from clusterbench.parsers.catalog import CATALOG, bands_of
from clusterbench.results import runreport
from clusterbench.results.runreport import Figure

#: A portable figure is one of a problem as large as the benchmark's own
#: rules ask: HPL's matrix beyond every cache (N >= 8000: 512 MB; HPCC sizes
#: its DGEMM and STREAM from it), the CG solver's class B or larger (a
#: 128^3 grid: its matrix alone is 100 MB). A toy problem (a test, a quick
#: check) yields no portable figure.
MIN_HPL_N = 8000
CG_CLASSES = ('B', 'C', 'D')


@dataclasses.dataclass(frozen=True)
class PortableFigure(Figure):
    """A derived figure, with what its node's facts say would fail it."""

    cause: str = ''


def _blas_cause(case):
    """Why a DGEMM-bound figure of *case* would fail: the generic OpenBLAS
    kernel its node facts name, else ''."""
    facts = case.get('node_facts') or {}
    for digest in facts.values() if isinstance(facts, dict) else ():
        found = isinstance(digest, dict) and blascore.cause(digest.get('openblas_core'))
        if found:
            return found
    return ''


def _key(fig):
    return (fig.test, fig.system, fig.partition, fig.environ, fig.run_index)


def _case_key(case):
    ident = (case['name'], case['system'], case['partition'], case['environ'])
    return (*ident, case.get('run_index') or 0)


def _partition_facts(cases, path):
    """{(system, partition): (declared peak per node or 0, {name: Band})}."""
    facts = {}
    for case in cases:
        where = (case['system'], case['partition'])
        declared = case.get('peak_gflops_per_node') or 0
        bands = case.get('portable_bands') or {}
        if where in facts and not declared and not bands:
            continue
        if not isinstance(declared, (int, float)) or isinstance(declared, bool):
            declared = 0
        label = f'{path}: {where[0]}:{where[1]}'
        facts[where] = (float(declared), bands_of(bands, label))
    return facts


def node_peak(case, declared=0.0):
    """The peak of the node a case ran on (machine.peak), or None."""
    facts = case.get('processor_facts') or {}
    cpus, per_core = facts.get('num_cpus'), facts.get('num_cpus_per_core') or 1
    cores = int(cpus // per_core) if isinstance(cpus, int) and cpus else None
    cores = cores or case.get('num_tasks_per_node')
    if declared and cores:
        return peak.declared(declared, cores)
    conditions = case.get('run_conditions') or {}
    identity = case.get('machine_identity') or {}
    mhz = next(
        (
            m
            for m in (
                conditions.get('mhz_before'),
                identity.get('max_mhz'),
                identity.get('base_mhz'),
            )
            if isinstance(m, (int, float)) and m > 0
        ),
        None,
    )
    kind = case.get('cpu_kind') or identity.get('cpu_kind')
    return peak.computed(
        kind, cores, mhz, fallback_arch=identity.get('microarchitecture')
    )


def _sized(case, names):
    """A problem large enough for the bands (see MIN_HPL_N, CG_CLASSES);
    *names*: the figures of the case (HPL's rate, the CG solver's count)."""
    if hpl.HPL.name in names:
        problem = case.get('hpl_problem')
        n = problem.get('n') if isinstance(problem, dict) else None
        return isinstance(n, int) and n >= MIN_HPL_N
    if 'iterations' in names:
        return case.get('problem_class') in CG_CLASSES
    return True


def _hpcc_figures(values, case, node):
    out = {}
    if node is not None and 'dgemm_single' in values:
        out[hpcc.DGEMM_PEAK_EFFICIENCY] = 100 * values['dgemm_single'] / node.per_core
    one_node = (case.get('num_nodes') or 1) == 1
    copy = values.get('stream_single_copy')
    if one_node and copy and 'pingpong_bandwidth_max' in values:
        pingpong = values['pingpong_bandwidth_max']
        out[hpcc.PINGPONG_COPY_EFFICIENCY] = 100 * pingpong / copy
    return out


def _hpl_figures(values, case, node):
    if node is None or 'hpl' not in values:
        return {}
    nodes = case.get('num_nodes') or 1
    return {hpl.HPL_PEAK_EFFICIENCY: 100 * values['hpl'] / (node.per_node * nodes)}


def _triads(by_case):
    """{(system, partition): (single triad, star triad)} of HPCC's figures, GB/s:
    the medians over the session's HPCC runs."""
    found = {}
    for key, (_, values) in by_case.items():
        if 'stream_single_triad' in values and 'stream_star_triad' in values:
            where = found.setdefault(key[1:3], ([], []))
            where[0].append(values['stream_single_triad'])
            where[1].append(values['stream_star_triad'])
    return {
        k: (statistics.median(s), statistics.median(t)) for k, (s, t) in found.items()
    }


def _cg_figures(values, case, triads):
    triad = triads.get((case['system'], case['partition']))
    bandwidth = values.get(cgsolver.BANDWIDTH.name)
    if triad is None or bandwidth is None or 'iterations' not in values:
        return {}
    ranks = case.get('num_tasks') or 1
    # One rank on its node streams alone; more share the node, as StarSTREAM.
    per_rank = triad[0] if case.get('num_tasks_per_node') == 1 else triad[1]
    figure = cgsolver.BANDWIDTH_TRIAD_EFFICIENCY
    return {figure: 100 * bandwidth / (per_rank * ranks)}


def banded(fig, band):
    """*fig* with its band as ReFrame's reference: the middle of the band and
    the relative thresholds that reach its ends."""
    middle = (band.lower + band.upper) / 2
    return Figure(
        fig.test,
        fig.system,
        fig.partition,
        fig.environ,
        fig.variable,
        fig.value,
        fig.unit,
        middle,
        band.lower / middle - 1,
        band.upper / middle - 1,
        fig.result,
        fig.run_index,
        fig.disturbed,
    )


def split(data, path, figures, keep_recorded=False):
    """(the figures references judge, the portable figures) of the report
    *data* at *path*, whose recorded figures are *figures*.

    A recorded figure with a default band and no reference is judged by its
    band (unless *keep_recorded*: a baseline judges it); the portable
    figures of each test case are derived from its figures and facts.
    """
    cases = {
        _case_key(c): c for c in runreport.cases(data, path) if not c.get('fixture')
    }
    facts = _partition_facts(cases.values(), path)
    names = {}
    for fig in figures:
        names.setdefault(_key(fig), set()).add(fig.variable)
    by_case, regular, portable = {}, [], []
    for fig in figures:
        case = cases.get(_key(fig))
        if case is None or not _sized(case, names[_key(fig)]):
            regular.append(fig)
            continue
        by_case.setdefault(_key(fig), (case, {}))[1][fig.variable] = fig.value
        band = _band_of(fig.variable, fig.unit, facts.get((fig.system, fig.partition)))
        if band is not None and not fig.has_reference and not keep_recorded:
            portable.append(banded(fig, band))
        else:
            regular.append(fig)
    triads = _triads(by_case)
    for key, (case, values) in by_case.items():
        declared, _ = facts.get(key[1:3], (0.0, {}))
        node = node_peak(case, declared)
        derived = {
            **_hpcc_figures(values, case, node),
            **_hpl_figures(values, case, node),
            **_cg_figures(values, case, triads),
        }
        disturbed = next(
            (f.disturbed for f in figures if _key(f) == key and f.disturbed), None
        )
        for figure, value in derived.items():
            fig = Figure(*key[:4], figure.name, value, figure.unit, None, None, None,
                         None, key[4], disturbed)  # fmt: skip
            band = _band_of(figure.name, figure.unit, facts.get(key[1:3]))
            why = _blas_cause(case) if figure in _BLAS_BOUND else ''
            portable.append(
                PortableFigure(*dataclasses.astuple(banded(fig, band)), why)
            )
    return regular, portable


def _band_of(name, unit, facts):
    figure = CATALOG.declared(name, unit)
    if figure is None or figure.band is None:
        return None
    overrides = facts[1] if facts else {}
    return overrides.get(name) or overrides.get(figure.name) or figure.band


#: The derived figures that a generic BLAS kernel fails.
_BLAS_BOUND = (hpcc.DGEMM_PEAK_EFFICIENCY, hpl.HPL_PEAK_EFFICIENCY)


def judge(portable):
    """The verdicts of portable figures: each against its band alone; a
    failed one names its cause where the node facts show one."""
    judged = verdict.group(portable, threshold=None)
    causes = {
        (f.test, f.system, f.partition, f.environ, f.variable): f.cause
        for f in portable
        if getattr(f, 'cause', '')
    }
    for row in judged:
        key = (row.test, row.system, row.partition, row.environ, row.variable)
        if row.kind not in (verdict.PASS, verdict.DISTURBED) and key in causes:
            row.verdict = verdict.Verdict(row.kind, causes[key])
    return judged

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
import re
import statistics

from clusterbench.core.reference import Reference
from clusterbench.judging import verdict
from clusterbench.machine import blascore, mpitransport, peak
from clusterbench.parsers import cgsolver, declarations, hpcc, hpl
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
    """A portable figure, with what its run's facts say would fail it, or
    why a figure of a problem too small for its band has no verdict."""

    cause: str = ''
    no_verdict: str = ''


def _digests(case):
    facts = case.get('node_facts') or {}
    return (
        [d for d in facts.values() if isinstance(d, dict)]
        if isinstance(facts, dict)
        else []
    )


def _blas_cause(case):
    """Why a DGEMM-bound figure of *case* would fail: the generic OpenBLAS
    kernel its node facts name, else ''."""
    for digest in _digests(case):
        found = blascore.cause(digest.get('openblas_core'))
        if found:
            return found
    return ''


def _transport_cause(case):
    """TCP between the ranks of a node: the transport variables of the
    test's own environment and of the job's (the node facts)."""
    chosen = mpitransport.chosen(
        case['env_vars'] if isinstance(case.get('env_vars'), dict) else {}
    )
    for digest in _digests(case):
        if isinstance(digest.get('mpi_transport'), dict):
            chosen.update(digest['mpi_transport'])
    return mpitransport.cause(chosen)


#: gcc's and clang's optimisation levels below which a build is unoptimised.
_UNOPTIMISED = ('0', '1', 'g')


def _build_cause(case):
    """An unoptimised build of the program: the flags the check recorded
    (``build_flags``: the CG solver's), else ''."""
    flags = case.get('build_flags')
    if not isinstance(flags, str) or not flags.strip():
        return ''
    levels = re.findall(r'(?:^|\s)-O(\w*)', flags)
    # No -O at all is the compiler's default, -O0; a bare -O is -O1.
    level = (levels[-1] or '1') if levels else '0'
    if level not in _UNOPTIMISED:
        return ''
    return f'an unoptimised build: -O{level} ({flags.strip()})'


def _number(value):
    return (
        value
        if isinstance(value, (int, float)) and not isinstance(value, bool)
        else None
    )


def _shared_core_cause(case):
    """Ranks that shared a core: more ranks than CPUs, or ranks that got a
    fraction of their CPUs that no other process took (binding)."""
    found = case.get('run_conditions')
    found = found if isinstance(found, dict) else {}
    ranks, cpus = _number(found.get('ranks')), _number(found.get('cpus'))
    per_rank = _number(found.get('cpus_per_rank')) or 1
    per_core = _number(case.get('num_tasks_per_core')) or 0
    if per_core > 1:
        return f'{per_core:g} ranks per core (num_tasks_per_core)'
    if ranks and cpus and ranks * per_rank > cpus:
        return f'{ranks:g} ranks on {cpus:g} CPU{"s" * (cpus != 1)}: ranks share a core'
    share = _number(found.get('ranks_cpu_share'))
    other = _number(found.get('other_cpu_share')) or 0.0
    steal = _number(found.get('steal_share')) or 0.0
    limits = (
        found.get('thresholds') if isinstance(found.get('thresholds'), dict) else {}
    )
    low = _number(limits.get('min_ranks_cpu_share')) or 0.9
    if not ranks or ranks < 2 or share is None or share >= low:
        return ''
    if other > (_number(limits.get('max_other_cpu')) or 0.1):
        return ''
    if steal > (_number(limits.get('max_steal')) or 0.02):
        return ''
    return (
        f"the ranks ran {share * 100:.1f} % of their CPUs' time while other "
        f'processes took {other * 100:.1f} %: ranks bound to a shared core'
    )


#: What a failed portable figure is likely caused by, in the order named.
_CAUSES = {
    hpcc.DGEMM_PEAK_EFFICIENCY.name: (_blas_cause, _shared_core_cause),
    hpl.HPL_PEAK_EFFICIENCY.name: (_blas_cause, _transport_cause, _shared_core_cause),
    hpcc.HPL_DGEMM_EFFICIENCY.name: (_transport_cause, _shared_core_cause),
    hpcc.PINGPONG_COPY_EFFICIENCY.name: (_transport_cause, _shared_core_cause),
    declarations.LINK_EFFICIENCY.name: (_transport_cause, _shared_core_cause),
    declarations.LINK_EFFICIENCY_BIDIR.name: (_transport_cause, _shared_core_cause),
    cgsolver.BANDWIDTH_TRIAD_EFFICIENCY.name: (
        _build_cause,
        _transport_cause,
        _shared_core_cause,
    ),
    cgsolver.FIGURES['bandwidth_triad_share'][0].name: (
        _build_cause,
        _transport_cause,
        _shared_core_cause,
    ),
}


def cause(name, unit, case):
    """The likely causes, from the facts of *case*, of a failed portable
    figure *name* ('' when its facts show none)."""
    figure = CATALOG.declared(name, unit)
    found = (f(case) for f in _CAUSES.get(figure.name if figure else name, ()))
    return '; '.join(dict.fromkeys(c for c in found if c))


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
    return not too_small(case, names)


#: What every reason of :func:`too_small` says (no_verdict_lines finds them).
_NEEDS = 'portable figures need'


def no_verdict_lines(table):
    """One line per check whose rows have no portable verdict because its
    problem is below the size limits, for below the table: ``CGSolverCheck
    (16 test cases): no portable verdict (class A: portable figures need
    class B or larger)``."""
    found = {}
    for row in table:
        detail = getattr(row.verdict, 'detail', '')
        if row.kind == verdict.NO_REFERENCE and _NEEDS in detail:
            check = re.split(r'\s*%', row.test, maxsplit=1)[0].strip()
            found.setdefault((check, detail), set()).add((row.test, row.environ))
    lines = []
    for (check, detail), cases in found.items():
        n = len(cases)
        count = f' ({n} test cases)' if n > 1 else ''
        lines.append(f'{check}{count}: no portable verdict ({detail})')
    return sorted(lines)


def too_small(case, names):
    """Why the problem of *case* is too small for a portable verdict ('' when
    it is not): ``class A: portable figures need class B or larger``."""
    if hpl.HPL.name in names:
        problem = case.get('hpl_problem')
        n = problem.get('n') if isinstance(problem, dict) else None
        if isinstance(n, int) and n >= MIN_HPL_N:
            return ''
        size = f'N={n}' if isinstance(n, int) else 'HPL N not recorded'
        return f'{size}: {_NEEDS} N >= {MIN_HPL_N}'
    if 'iterations' in names:
        found = case.get('problem_class')
        if found in CG_CLASSES:
            return ''
        size = f'class {found}' if found else 'problem class not recorded'
        return f'{size}: {_NEEDS} class {CG_CLASSES[0]} or larger'
    return ''


_PARAMETER = re.compile(r'%(\w+)=([^\s%]+)')


def _params(case):
    """{parameter: value as text} of a test case: the ``%name=value`` of its
    name, and its recorded variables (``stencil``) where it has them."""
    found = dict(_PARAMETER.findall(str(case.get('name') or '')))
    for name, value in case.items():
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            found[name] = str(value)
    return found


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
    ref = Reference(middle, band.lower / middle - 1, band.upper / middle - 1, fig.unit)
    return dataclasses.replace(fig, ref=ref)


def _portable(fig, **more):
    """*fig* as a PortableFigure (its origin kept as it is: no astuple)."""
    fields = {f.name: getattr(fig, f.name) for f in dataclasses.fields(Figure)}
    return PortableFigure(**fields, **more)


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
        if case is None:
            regular.append(fig)
            continue
        where = facts.get((fig.system, fig.partition))
        band = _band_of(fig.variable, fig.unit, where, case)
        judged_by_band = band is not None and fig.ref is None
        small = too_small(case, names[_key(fig)])
        if small and judged_by_band and not keep_recorded:
            # Its row says why it has no verdict, not a bare "no reference".
            portable.append(_portable(fig, no_verdict=small))
            continue
        if small:
            regular.append(fig)
            continue
        by_case.setdefault(_key(fig), (case, {}))[1][fig.variable] = fig.value
        if judged_by_band and not keep_recorded:
            why = cause(fig.variable, fig.unit, case)
            portable.append(_portable(banded(fig, band), cause=why))
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
            fig = Figure(*key[:4], figure.name, value, figure.unit, None, None,
                         key[4], disturbed)  # fmt: skip
            band = _band_of(figure.name, figure.unit, facts.get(key[1:3]), case)
            why = cause(figure.name, figure.unit, case)
            portable.append(_portable(banded(fig, band), cause=why))
    return regular, portable


def _band_of(name, unit, facts, case):
    """The band of figure *name* for *case*: its partition's own
    (``extras.portable_bands``), else its variant's, else the default."""
    figure = CATALOG.declared(name, unit)
    if figure is None or figure.band is None:
        return None
    overrides = facts[1] if facts else {}
    found = overrides.get(name) or overrides.get(figure.name)
    return found or figure.band_for(_params(case))


def judge(portable):
    """The verdicts of portable figures: each against its band alone; a
    failed one names its likely cause where the run's facts show one, and a
    figure of a problem too small for its band says so."""
    judged = verdict.group(portable, threshold=None, band=True)
    details = {}
    for f in portable:
        key = (f.test, f.system, f.partition, f.environ, f.variable)
        for detail in (getattr(f, 'cause', ''), getattr(f, 'no_verdict', '')):
            if detail and detail not in details.setdefault(key, []):
                details[key].append(detail)
    for row in judged:
        key = (row.test, row.system, row.partition, row.environ, row.variable)
        # (A figure judged despite its run's disturbance keeps saying so.)
        said = '; '.join([*details.get(key, ()), *filter(None, [row.verdict.detail])])
        if said and (row.kind.fails_run or row.kind == verdict.NO_REFERENCE):
            row.verdict = verdict.Verdict(row.kind, said)
    return judged

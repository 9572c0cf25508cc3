"""From ReFrame run reports and stored sessions to the report's data model.

Everything the report shows is computed here, without plotting or HTML:
configurations and their labels, figures and verdicts per configuration,
message-size curves, scaling series, per-node and per-link acceptance data,
elasticities and provenance. A section without data carries the reason
instead, and a figure that was not measured stays ``None`` (never zero).

The data model is in :mod:`.model`, one module per report section beside
it (:mod:`.communication`, :mod:`.scaling`, :mod:`.acceptance`,
:mod:`.sensitivity`, :mod:`.trends`, :mod:`.runfacts`); this module reads
the inputs into configurations and cells and has each section built.
"""

import dataclasses
import math
from collections import defaultdict

from clusterbench.core.figures import Better
from clusterbench.judging import verdict
from clusterbench.report import (
    acceptance,
    communication,
    configmerge,
    executive,
    heap,
    oneverdict,
    scaling,
    sensitivity,
    trends,
)
from clusterbench.report import curves as curvelib
from clusterbench.report.acceptance import _is_link_figure, _robust_flags
from clusterbench.report.identity import (
    PLACEMENT,
    SIZE,
    _stack_from_name,
    application_family,
    better,
    cpu_kind_of,
    identity_of,
    name_without,
    nodes_of,
    split_name,
    stack_of,
    test_name,
)
from clusterbench.report.inputs import Run, load_history, load_reports
from clusterbench.report.model import (
    FAILED,
    MISSING,
    Acceptance,
    Benchmark,
    Cell,
    Communication,
    Config,
    ReportData,
    Section,
    Sensitivity,
    SourceInfo,
)
from clusterbench.report.runfacts import (
    hw_summary,
    node_facts,
    run_dates,
    time_text,
    timestamp,
    utc_now,
)
from clusterbench.report.sensitivity import loglog_slope
from clusterbench.results import runreport

#: What callers and tests read from here; the pieces live in the modules above.
__all__ = [
    'FAILED',
    'MISSING',
    'Run',
    '_is_link_figure',
    '_robust_flags',
    '_stack_from_name',
    'assemble',
    'hw_summary',
    'load_history',
    'load_reports',
    'loglog_slope',
    'run_dates',
]


# ---------------------------------------------------------------- assembly


def assemble(runs, title='Benchmark report', now=None, references=None, baseline=None):
    """The report's data model from *runs* (see :func:`load_reports`).

    *references*: the reference root that dates the references (default:
    the one every command reads); *baseline*: the system (or
    system:partition) the executive page compares the others with.
    """
    with heap.paused():
        builder = _Builder()
        # Each figure's verdict is the one compare gives (oneverdict).
        builder.one = oneverdict.of_runs(runs)
        for run in runs:
            builder.add_run(run)
        data = builder.finish(title, now)
        data.executive = executive.build(
            data,
            lambda key, test: builder.case_info.get((key, test)),
            builder.facts,
            builder.sessions,
            references,
            baseline,
        )
        data.trends = trends.build(runs)
        return data


class _Builder:
    def __init__(self):
        self.configs = {}
        self.sources = []
        self.samples = defaultdict(list)  # (config key, test, var) -> [Figure]
        self.case_info = {}  # (config key, test) -> latest case dict
        self.failures = []
        self.units = {}
        self.seen_cases = set()
        self.comm_cases = []  # (config key, test, placement, case, curves)
        self.comm_problems = []
        self.skipped = []  # (system, partition, environ, test, reason)
        #: (system, partition, CPU kind) -> one-node cases: nodes of two
        #: kinds are never each other's peers.
        self.node_cases = defaultdict(list)
        self.fabric_cases = []
        self.pair_samples = defaultdict(list)
        self.scaling_samples = defaultdict(list)
        self.warnings = []
        #: (system, partition, CPU kind) -> latest case's hardware facts
        self.facts = {}
        self.sessions = defaultdict(lambda: {'healthy': set(), 'disturbed': set()})
        self._session = ''
        self.one = oneverdict.Verdicts({}, {})

    # --- reading

    def add_run(self, run):
        info = run.info
        source = SourceInfo(
            run.source,
            str(info.get('uuid', '')),
            str(info.get('hostname', '')),
            time_text(info.get('time_start_unix'), info.get('time_start')),
            time_text(info.get('time_end_unix'), info.get('time_end')),
            str(info.get('version', '')),
            str(info.get('cmdline', '')),
        )
        self.sources.append(source)
        self._session = source.uuid or run.source
        found = runreport.cases(run.data, run.source)
        index = runreport.case_index(found)
        for case in found:
            if case.get('fixture'):
                continue
            uid = case.get('uuid')
            if uid and uid in self.seen_cases:
                continue  # the same session read twice (report and database)
            if uid:
                self.seen_cases.add(uid)
            source.cases += 1
            if case.get('result') == 'skip':
                # Not run here by design (e.g. inter-node on one node): no
                # configuration of its own, no failure; the reason is listed.
                _, reason = runreport.not_run(case, index)
                self.skipped.append(
                    (
                        case['system'],
                        case['partition'],
                        case['environ'],
                        case['name'],
                        reason,
                    )
                )
                continue
            self._add_case(case, run.source)

    def _config(self, case, source):
        mpi, compiler, blas, origin = stack_of(case)
        nodes = nodes_of(case)
        kind = cpu_kind_of(case)
        key = (
            case['system'],
            case['partition'],
            case['environ'],
            mpi,
            compiler,
            blas,
            nodes,
            kind,
        )
        config = self.configs.get(key)
        if config is None:
            config = Config(key, '', *key[:7], origin, cpu_kind=kind)
            self.configs[key] = config
        config.sources.add(source)
        config.hosts.update(h for h in case.get('job_nodelist') or [] if h)
        if isinstance(case.get('processor_facts'), dict) and case['processor_facts']:
            config.processor = case['processor_facts']
        when = case.get('job_completion_time_unix')
        if timestamp(when) is not None:
            config.completed.append(when)
        return config

    def _add_case(self, case, source):
        config = self._config(case, source)
        one = {'runs': [{'testcases': [case]}]}
        figures, failures = runreport.extract(one, source)
        figures += self.one.derived_of(case, source)
        hosts = sorted(set(case.get('job_nodelist') or []))
        # Where a test ran is not what it ran: placement parameters (ReFrame's
        # --distribute, a node or pair parameter) do not make a new figure.
        name = test_name(case['name'], hosts) + identity_of(case)
        self.case_info[(config.key, name)] = case
        for fail in failures:
            self.failures.append((config, dataclasses.replace(fail, test=name)))
        self._note_partition(case, figures)
        for fig in figures:
            self.samples[(config.key, name, fig.variable)].append(fig)
            self.units.setdefault((name, fig.variable), fig.unit)
        found, problem = curvelib.from_case(case)
        if found and not case.get('disturbed'):
            placement = split_name(case['name'])[1].get('placement', '')
            self.comm_cases.append((config.key, name, placement, case, found))
        if problem:
            self.comm_problems.append(f'{name} on {config.short}: {problem}')
        for host, facts in node_facts(case).items():
            config.hwinfo.setdefault(host, facts)
        placement = name
        if len(hosts) == 1:
            where = (case['system'], case['partition'], cpu_kind_of(case))
            self.node_cases[where].append(case)
        if isinstance(case.get('fabric_result'), dict):
            self.fabric_cases.append(case)
        ranks = case.get('num_tasks')
        # A DISTURBED run is shown in its cell, never pooled into a series.
        healthy = [f for f in figures if not f.disturbed]
        if healthy and len(hosts) == 2 and ranks == 2:
            where = (case['system'], case['partition'], placement)
            for fig in healthy:
                self.pair_samples[(*where, fig.variable)].append(
                    (tuple(hosts), fig, case['environ'])
                )
        if healthy and isinstance(ranks, int) and ranks > 0:
            where = (
                case['system'],
                case['partition'],
                cpu_kind_of(case),
                case['environ'],
                name_without(name, PLACEMENT | SIZE),
            )
            nodes = nodes_of(case)
            for fig in healthy:
                self.scaling_samples[(*where, fig.variable)].append(
                    (ranks, nodes, fig, case.get('scaling'))
                )

    def _note_partition(self, case, figures):
        """What the executive page says of a partition: its sessions
        (healthy or DISTURBED) and the facts of its latest case."""
        where = (case['system'], case['partition'], cpu_kind_of(case))
        session = str(case.get('session_uuid') or self._session)
        if case.get('disturbed'):
            self.sessions[where]['disturbed'].add(session)
        elif figures:
            self.sessions[where]['healthy'].add(session)
        facts = self.facts.setdefault(where, {})
        for key in ('machine_identity', 'run_conditions', 'link_peak'):
            value = case.get(key)
            if isinstance(value, dict) and value:
                if key != 'link_peak' or value.get('peak_mbs'):
                    facts[key] = value
        declared = case.get('peak_gflops_per_node')
        # 0.0 is what a case records where the partition declares no peak
        # (an older session, another partition's set-up): not a declaration.
        if type(declared) in (int, float) and 0 < declared < math.inf:
            facts['peak_gflops_per_node'] = declared

    # --- building

    def finish(self, title, now):
        configmerge.merge_stacks(self)
        configs = sorted(
            self.configs.values(),
            key=lambda c: (
                c.system,
                c.partition,
                c.cpu_kind,
                c.environ,
                c.nodes if c.nodes is not None else 0,
                str(c.key),
            ),
        )
        kinds = defaultdict(set)
        for config in configs:
            kinds[(config.system, config.partition)].add(config.cpu_kind)
        for i, config in enumerate(configs, 1):
            config.id = f'C{i}'
            config.kinds_differ = len(kinds[(config.system, config.partition)]) > 1
        benchmarks = self._benchmarks()
        cells = self._cells(configs, benchmarks)
        applications = [(b.application, b) for b in benchmarks if b.application]
        # By family name: a new benchmark's headline needs no list of families.
        applications.sort(key=lambda p: (p[0], p[1].title))
        data = ReportData(
            title=title,
            generated=time_text(now if now is not None else utc_now(), None),
            sources=self.sources,
            configs=configs,
            benchmarks=benchmarks,
            cells=cells,
            failures=self.failures,
            skipped=self.skipped,
            applications=applications,
            communication=Communication(),
            scaling=Section(),
            scaling_series=[],
            acceptance=Acceptance(),
            sensitivity=Sensitivity(),
            warnings=self.warnings,
        )
        data.communication = communication.build(
            data, self.comm_cases, self.comm_problems
        )
        data.scaling_series = scaling.build(benchmarks, self.scaling_samples)
        if not data.scaling_series:
            data.scaling = Section(
                'no test ran at two or more rank or node counts in one '
                'configuration (e.g. CGSolverCheck with ranks_per_node=1 and '
                'all, or runs with -S num_nodes=N)'
            )
        data.acceptance = acceptance.build(
            benchmarks, self.node_cases, self.fabric_cases, self.pair_samples
        )
        data.sensitivity = sensitivity.build(data)
        if not benchmarks and not self.failures:
            self.warnings.append('the inputs hold no figure and no failed test')
        return data

    def _benchmarks(self):
        found = {}
        for (_, name, variable), figs in self.samples.items():
            key = (name, variable)
            if key in found:
                continue
            base, params = split_name(name)
            unit = self.units.get(key, figs[0].unit)
            found[key] = Benchmark(
                key,
                name,
                variable,
                unit,
                base,
                params,
                better(variable, unit),
                application_family(variable, unit),
            )
        # A test that failed everywhere still gets a row, so it is seen.
        for _, fail in self.failures:
            if not any(k[0] == fail.test for k in found):
                key = (fail.test, '-')
                base, params = split_name(fail.test)
                found[key] = Benchmark(key, fail.test, '-', '', base, params, None)
        return sorted(found.values(), key=lambda b: (b.base, b.test, b.variable))

    def _cells(self, configs, benchmarks):
        failed = {}
        for config, fail in self.failures:
            failed.setdefault((config.key, fail.test), fail)
        cells = {}
        for bench in benchmarks:
            row = []
            for config in configs:
                figs = self.samples.get((config.key, bench.test, bench.variable))
                cell = self._cell(config, bench, figs, failed)
                cells[(config.id, bench.key)] = cell
                row.append(cell)
            _mark_best(row, bench.better)
        return cells

    def _cell(self, config, bench, figs, failed):
        case = self.case_info.get((config.key, bench.test)) or {}
        ref_file = str(case.get('reference_file') or '')
        healthy = [f for f in figs or () if not f.disturbed]
        disturbed = [f for f in figs or () if f.disturbed]
        left_out = {
            'disturbed': [f.value for f in disturbed],
            'disturbed_why': '; '.join(sorted({f.disturbed for f in disturbed})),
        }
        if healthy:
            judged = verdict.Judged(
                bench.test,
                config.system,
                config.partition,
                config.environ,
                bench.variable,
                bench.unit,
                [],
                None,
            )
            for fig in healthy:
                judged.values.append(fig.value)
                if fig.ref is not None:
                    judged.ref = fig.ref
            judged.judge()
            return Cell(
                config,
                bench,
                # The word only (INCONCLUSIVE's detail is in the table).
                self.one.kind(healthy) or verdict.kind(judged.verdict),
                list(judged.values),
                judged.ref,
                reference_file=ref_file,
                **left_out,
            )
        if disturbed:
            # Only DISTURBED samples: never a value to compare, and DISTURBED
            # unless, as in `run` and `compare`, the figure fails beyond what
            # the disturbance explains (judging.disturbed): then that verdict.
            ref = next((f.ref for f in disturbed if f.ref is not None), None)
            state = self.one.kind(disturbed)
            if state is None or not state.fails_run:
                state = verdict.DISTURBED
            why = left_out['disturbed_why']
            return Cell(
                config,
                bench,
                state,
                ref=ref,
                reason=f'{verdict.DISTURBED} ({why})'
                if state == verdict.DISTURBED
                else f'{state} despite its {verdict.DISTURBED} run ({why})',
                reference_file=ref_file,
                **left_out,
            )
        fail = failed.get((config.key, bench.test))
        if fail is not None:
            return Cell(
                config,
                bench,
                FAILED,
                reason=f'{fail.phase}: {fail.reason}',
                reference_file=ref_file,
            )
        return Cell(config, bench, MISSING, reason='not run on this configuration')

    # --- communication


def _mark_best(row, direction):
    if direction is None:
        return
    measured = [c for c in row if c.values and c.state != FAILED]
    if len(measured) < 2:
        return
    pick = max if direction == Better.HIGHER else min
    best = pick(measured, key=lambda c: c.value)
    best.best = True

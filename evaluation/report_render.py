#!/usr/bin/env python3
"""How long does `clusterbench report` take for a large comparison?

Synthesizes ReFrame 4.10 run reports for N configurations (default 100: 5
systems x 2 partitions x 5 environments x 2 node counts) with F figures each
(default 50: NPB BT..SP, two CG-solver runs, HPCC, STREAM, HPL and HPCG, with
references on most figures, a few flagged figures, failed and missing tests)
and (unless --no-curves) the IMB curves of every configuration, kept in the
report as the IMB checks keep them; then
times reading, assembling, plotting and writing the report, and prints the
times. Each system's report is written once per session (default 10
sessions, each its own ReFrame session with its own uuid, start time and
figures within a few per cent), so that the trend section has its series.
The issue asks for at most 10 s at 100 configurations x 10 sessions.

Usage: evaluation/report_render.py [--configs 100] [--sessions 10] [--no-curves]
       [--keep DIR]
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time

from clusterbench.bench.curves import Curve
from clusterbench.report import assemble, plots, render

NPB = ('bt', 'cg', 'ep', 'ft', 'is', 'lu', 'mg', 'sp')
HPCC = (
    ('hpl', 'GFlop/s'),
    ('hpl_dgemm_efficiency', '%'),
    ('dgemm_star', 'GFlop/s'),
    ('dgemm_single', 'GFlop/s'),
    *((f'stream_{m}_{k}', 'GB/s') for m in ('star', 'single')
      for k in ('copy', 'scale', 'add', 'triad')),
    *((f'pingpong_latency_{s}', 'us') for s in ('min', 'avg', 'max')),
    *((f'pingpong_bandwidth_{s}', 'GB/s') for s in ('min', 'avg', 'max')),
    ('ring_natural_latency', 'us'),
    ('ring_random_latency', 'us'),
    ('ring_natural_bandwidth', 'GB/s'),
    ('ring_random_bandwidth', 'GB/s'),
    ('mpifft', 'GFlop/s'),
    ('mpi_random_access', 'GUP/s'),
)  # fmt: skip
CG = (
    ('time', 's'),
    ('gflops', 'GFlop/s'),
    ('bandwidth', 'GB/s'),
    ('iterations', 'iterations'),
    ('mpi_share', '%'),
)


def tests():
    """(test name, [(variable, unit)], ranks per node or None) of one config."""
    out = [(f'NPBCheck %benchmark={b} %problem_class=C', [('mops', 'Mop/s')], None)
           for b in NPB]  # fmt: skip
    for rpn in ('1', 'all'):
        out.append(
            (
                f'CGSolverCheck %stencil=7 %variant=classic %ranks_per_node={rpn}',
                CG,
                rpn,
            )
        )
    out.append(('HPCCCheck', list(HPCC), None))
    kernels = ('copy', 'scale', 'add', 'triad')
    out.append(('StreamCheck', [(f'stream_{k}', 'GB/s') for k in kernels], None))
    out.append(('HPLCheck %mpi=openmpi %blas=openblas', [('hpl', 'GFlop/s'),
                ('hpl_time', 's')], None))  # fmt: skip
    out.append(('HPCGCheck', [('gflops', 'GFlop/s'), ('time', 's')], None))
    return out


def imb_cases(rng, latency, bandwidth, ranks, base):
    """IMB point-to-point and collective cases keeping their curves, as the
    IMB checks keep them in the run report."""
    sizes = [0] + [2**k for k in range(0, 23)]
    p2p, coll = {}, {}
    for name in ('PingPong', 'Sendrecv', 'Exchange', 'Bcast', 'Reduce', 'Allreduce'):
        times = [
            (latency * (1 + 0.3 * (name != 'PingPong')) + s / bandwidth)
            * rng.uniform(0.95, 1.05)
            for s in sizes
        ]
        if name in ('Bcast', 'Reduce', 'Allreduce'):
            coll[name] = Curve(
                name, sizes, {'t_avg': ('us', times)}, {'processes': ranks}
            )
            continue
        column = 'latency' if name == 'PingPong' else 't_max'
        bw = [s / t for s, t in zip(sizes, times)]
        cols = {column: ('us', times), 'bandwidth': ('MB/s', bw)}
        p2p[name] = Curve(name, sizes, cols, {'processes': 2})
    coll['Barrier'] = Curve(
        'Barrier', [0], {'t_avg': ('us', [latency * 2])}, {'processes': ranks}
    )
    return [
        dict(
            base,
            name='IMBPointToPointCheck %placement=inter',
            curves={n: c.as_dict() for n, c in p2p.items()},
            link_peak={'peak_mbs': 25000.0, 'how': 'declared'},
            uuid=base['uuid'] + ':p2p',
        ),
        dict(
            base,
            name='IMBCollectiveCheck',
            curves={n: c.as_dict() for n, c in coll.items()},
            uuid=base['uuid'] + ':coll',
        ),
    ]


def synthesize(directory, n_configs, curves, seed=1, sessions=1):
    """Write one report per system and session; return their paths and the
    figure count per configuration and session."""
    rng = random.Random(seed)
    systems = [f'sys{i}' for i in range(1, 6)]
    partitions = ['cpu', 'fat']
    environs = ['gnu-openmpi', 'gnu-mpich', 'intel-impi', 'aocc-openmpi', 'nvhpc-hpcx']
    configs = [
        (s, p, e, n)
        for s in systems
        for p in partitions
        for e in environs
        for n in (1, 2)
    ][:n_configs]
    reports = {}
    figures = 0
    for index, (system, part, environ, nodes) in enumerate(configs):
        mem_bw = rng.uniform(100, 400)
        flops = rng.uniform(500, 3000)
        latency = rng.uniform(0.8, 3.0)
        link = rng.uniform(5000, 25000)
        runs = reports.setdefault(system, [])
        outdir = os.path.join(directory, 'output', system, part, environ, str(nodes))
        os.makedirs(outdir, exist_ok=True)
        for t, (name, variables, rpn) in enumerate(tests()):
            if (index + t) % 97 == 13:
                continue  # not run here: must show as missing
            cores = 64
            ranks = nodes * (cores if rpn in (None, 'all') else 1)
            case = {
                'name': name,
                'display_name': name,
                'system': system,
                'partition': part,
                'environ': environ,
                'fixture': False,
                'result': 'pass',
                'fail_phase': None,
                'fail_reason': None,
                'num_nodes': nodes,
                'num_tasks': ranks,
                'job_nodelist': [f'{system}n{i:03d}' for i in range(nodes)],
                'job_completion_time_unix': 1.79e9 + index * 60 + t,
                'outputdir': outdir if name.startswith('HPCC') else None,
                'processor_facts': {'arch': 'zen4', 'num_cpus': cores},
                'reference_file': name.split()[0].lower() + '.yaml',
                'uuid': f'{system}:{index}:{t}',
                'run_index': 0,
                'perfvalues': {},
            }
            if (index * 7 + t) % 89 == 5:
                case.update(
                    result='fail',
                    fail_phase='sanity',
                    fail_reason='sanity error: verification failed',
                )
            for var, unit in variables:
                scale = {'s': 1 / flops, 'us': latency, '%': 50.0}.get(unit, flops)
                if 'stream' in var or var == 'bandwidth':
                    scale = mem_bw
                value = scale * rng.uniform(0.8, 1.2) * (1 if rpn != '1' else 0.02)
                ref = value * rng.uniform(0.9, 1.1) if t % 3 else 0
                lower, upper = (-0.05, 0.05) if ref else (None, None)
                case['perfvalues'][f'{system}:{part}:{var}'] = [
                    value,
                    ref,
                    lower,
                    upper,
                    unit,
                    'pass',
                ]
                figures += 1
            runs.append(case)
        if curves:
            base = dict(
                runs[-1], perfvalues={}, outputdir=None, result='pass', fail_phase=None
            )
            runs += imb_cases(rng, latency, link, 2 * nodes, base)
    paths = []
    for session in range(sessions):
        start = 1.79e9 + session * 86400
        for system, cases in reports.items():
            uuid = f'session-{system}-{session}'
            path = os.path.join(directory, f'{system}-{session}.json')
            with open(path, 'w') as f:
                json.dump(
                    {
                        'session_info': {
                            'uuid': uuid,
                            'hostname': f'{system}-login',
                            'time_start_unix': start,
                            'time_end_unix': start + 3600,
                            'version': '4.10.4',
                            'cmdline': 'reframe -r',
                        },
                        'runs': [
                            {
                                'testcases': [
                                    _again(c, uuid, session, rng) for c in cases
                                ]
                            }
                        ],
                    },
                    f,
                )
            paths.append(path)
    return paths, len(configs), figures // max(len(configs), 1)


def _again(case, uuid, session, rng):
    """*case* as measured in another session: its own uuid and time, and
    figures within a few per cent of the first session's."""
    if session == 0:
        return dict(case, uuid=f'{uuid}:{case["uuid"]}')
    perf = {
        key: [values[0] * rng.uniform(0.97, 1.03), *values[1:]]
        for key, values in case['perfvalues'].items()
    }
    return dict(
        case,
        uuid=f'{uuid}:{case["uuid"]}',
        perfvalues=perf,
        job_completion_time_unix=case['job_completion_time_unix'] + session * 86400,
    )


def _cpu():
    mine, children = os.times()[:2], os.times()[2:4]
    return sum(mine) + sum(children)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--configs', type=int, default=100)
    p.add_argument('--sessions', type=int, default=10)
    p.add_argument('--no-curves', dest='curves', action='store_false')
    p.add_argument('--keep', help='write the report here instead of a temporary dir')
    args = p.parse_args(argv)
    work = tempfile.mkdtemp(prefix='report-render-')
    try:
        paths, n_configs, per_config = synthesize(
            work, args.configs, args.curves, sessions=args.sessions
        )
        out_dir = args.keep or work
        os.makedirs(out_dir, exist_ok=True)
        output = os.path.join(out_dir, 'report.html')
        cpu_start = _cpu()
        t0 = time.perf_counter()
        runs = assemble.load_reports(paths)
        t1 = time.perf_counter()
        data = assemble.assemble(runs)
        t2 = time.perf_counter()
        sections, made = plots.make_all(data)
        t3 = time.perf_counter()
        html = render.render(data, sections, 'report-data')
        t4 = time.perf_counter()
        cpu_render = _cpu() - cpu_start
        cpu0 = _cpu()
        w0 = time.perf_counter()
        render.write(data, output)  # the whole command's work, once more
        t5 = time.perf_counter()
        cpu = _cpu() - cpu0
        print(
            f'{n_configs} configurations x {per_config} figures x '
            f'{args.sessions} sessions ({len(data.benchmarks)} distinct), '
            f'{len(made)} plots, HTML {len(html) / 1e6:.1f} MB'
        )
        print(f'read      {t1 - t0:6.2f} s')
        print(f'assemble  {t2 - t1:6.2f} s')
        print(f'plots     {t3 - t2:6.2f} s')
        print(f'template  {t4 - t3:6.2f} s')
        print(
            f'render total (read + assemble + plots + template): {t4 - t0:.2f} s '
            f'wall, {cpu_render:.2f} s CPU over all processes'
        )
        print(
            f'render.write (plots + template + files): {t5 - w0:.2f} s wall, '
            f'{cpu:.2f} s CPU over all processes, load average {os.getloadavg()[0]:.1f}'
        )
        if args.keep:
            print(f'report: {output}')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())

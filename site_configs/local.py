"""System ``local``: whatever machine clusterbench runs on, as a one-node system.

Processor facts come from ReFrame's own detector at configuration load (ReFrame
only auto-detects partitions whose launcher is ``local``), and the references
for ``local`` are keyed by them (see reference_data/local/), so a machine of another
kind gets a visible *no reference* state.

When OpenBLAS runs a generic kernel on a CPU that offers more (an unknown
model), the environments set ``OPENBLAS_CORETYPE`` (clusterbench.machine.
blascore); a user's own variable wins. Only here: a production site fixes
its BLAS, and the portable figures name the cause.
"""

import os
import runpy

from reframe.utility.cpuinfo import cpuinfo

from clusterbench.machine import blascore

common = runpy.run_path(os.path.join(os.path.dirname(__file__), 'common.py'))

_blas = blascore.local_setting()
BLAS_ENV = [[blascore.VARIABLE, _blas[1]]] if _blas else []
DESCR = 'All cores of this node' + (f'; {blascore.note(*_blas)}' if _blas else '')

site_configuration = {
    'systems': [
        {
            'name': 'local',
            'descr': 'This machine as a one-node system',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'default',
                    'descr': DESCR,
                    'scheduler': 'local',
                    'launcher': 'mpirun',
                    'environs': ['gnu-openmpi', 'gnu-mpich'],
                    'max_jobs': 1,
                    'processor': cpuinfo(),
                    'extras': {
                        'mem_per_node': common['host_memory_bytes'](),
                        'cpu_kind': common['cpu_kind'](),
                        # A VM that shares its host: runs are judged for
                        # neighbours (DISTURBED, host probe, confirmation runs,
                        # --wait-quiet); see docs/noisy-host.md.
                        'noisy_host': True,
                    },
                }
            ],
        }
    ],
    'environments': [
        common['gnu_openmpi'](
            extra_features=['hpcc', 'netpipe'],
            target_systems=['local'],
            env_vars=BLAS_ENV,
        ),
        common['gnu_mpich'](target_systems=['local'], env_vars=BLAS_ENV),
    ],
    # ReFrame polls a running job up to 10 times a second by default, on a
    # core the benchmark's ranks use here: that made sub-second benchmarks
    # 10-20 % slower than the same binary by hand (NPB CG class A: 0.55 s
    # against 0.45 s, five alternating rounds; at 0.5 polls/s: 0.45 s both).
    # A job that ends is noticed at most 2 s late.
    'general': common['general'](poll_rate_max=0.5),
    'storage': common['storage'](),
    'logging': common['logging'](),
}

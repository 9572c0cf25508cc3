"""System ``example-site``: a worked example of a production site.

It matches ``spack_envs/example-site/`` (``clusterbench spack-envs`` checks
the two against each other): Open MPI 5.0.8 and MVAPICH 4.1 built by Spack
over UCX with Slurm's PMIx, OpenBLAS 0.3.30 built by Spack, the site's GCC
13.3, all loaded as Lmod modules that Spack generated. Two Slurm partitions
on one InfiniBand HDR fabric, both without GPUs:

* ``ib``: 64 two-socket nodes, 128 cores and 256 GiB each;
* ``bigmem``: 4 nodes of the same processor with 2 TiB each, built from the
  same Spack environment (named in ``extras['spack_env']``).

Each partition declares its link (4x HDR, 64b66b; a PCIe gen 4 x16 slot), so
the communication checks report their efficiency against its peak. A centre
adapts every value to its own nodes (``clusterbench site init`` writes one
from the cluster) and keeps the module names in step with its Spack
environment's pins.
"""

import os
import runpy

common = runpy.run_path(os.path.join(os.path.dirname(__file__), 'common.py'))

#: The Lmod modules of the stack, as Spack names them (``spack module lmod``).
COMPILER = 'gcc/13.3.0'
OPENBLAS = 'openblas/0.3.30'

#: Both partitions' processor: 2 x AMD EPYC 7763, SMT off.
PROCESSOR = {
    'arch': 'zen3',
    'vendor': 'AuthenticAMD',
    'model': 'AMD EPYC 7763 64-Core Processor',
    'num_cpus': 128,
    'num_cpus_per_core': 1,
    'num_cpus_per_socket': 64,
    'num_sockets': 2,
}
#: 4x HDR InfiniBand (50 Gb/s per lane) in a PCIe gen 4 x16 slot.
FABRIC = {
    'link': {'rate_gbps': 200, 'encoding': '64b66b', 'width': 4},
    'pcie': {'gen': 4, 'lanes': 16},
}
GIB = 2**30


def _partition(name, descr, num_nodes, mem_gib, **extras):
    return {
        'name': name,
        'descr': descr,
        'scheduler': 'slurm',
        'launcher': 'srun',
        'access': [f'--partition={name}'],
        'environs': ['gnu-openmpi', 'gnu-mvapich'],
        'max_jobs': 16,
        'features': ['multinode', 'ib'],
        'processor': PROCESSOR,
        'extras': {
            'mem_per_node': mem_gib * GIB,
            'num_nodes': num_nodes,
            # Dedicated nodes: the noisy-host profile stays off.
            # 'noisy_host': True,  # see docs/noisy-host.md
            **FABRIC,
            **extras,
        },
    }


site_configuration = {
    'systems': [
        {
            'name': 'example-site',
            'descr': 'Example production site: CPU and large-memory nodes on HDR IB',
            'hostnames': [r'^login\d+\.example\.org'],
            'modules_system': 'lmod',
            'partitions': [
                _partition('ib', 'CPU nodes, 4x HDR InfiniBand', 64, 256),
                _partition(
                    'bigmem',
                    'Large-memory nodes, 4x HDR InfiniBand',
                    4,
                    2048,
                    spack_env='spack_envs/example-site/ib',
                ),
            ],
        }
    ],
    'environments': [
        common['gnu_openmpi'](
            modules=[COMPILER, 'openmpi/5.0.8', OPENBLAS],
            target_systems=['example-site'],
            env_vars=[['SLURM_MPI_TYPE', 'pmix'], ['UCX_TLS', 'rc,ud,sm,self']],
        ),
        common['module_environment'](
            'gnu-mvapich',
            'mvapich',
            [COMPILER, 'mvapich/4.1', OPENBLAS],
            target_systems=['example-site'],
            env_vars=[['SLURM_MPI_TYPE', 'pmi2']],
        ),
    ],
    'general': common['general'](),
    'storage': common['storage'](),
}

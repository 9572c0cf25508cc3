"""Parts shared by every clusterbench site configuration.

A system file (one per system, e.g. ``local.py``) composes these with
``runpy.run_path`` instead of copying them. Nothing here names a system: the
programming environments describe Debian's toolchains, and each declares what
it offers as ReFrame *features*, which checks select on.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(HERE)
WRAPPERS = os.path.join(HERE, 'bin')

# Open MPI refuses root without these two; CI and containers run as root.
_OPENMPI_ROOT = [
    ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
    ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
]


def gnu_openmpi(name='gnu-openmpi', extra_features=(), target_systems=('*',)):
    """GCC with Debian's Open MPI 4.1 and OpenBLAS."""
    return {
        'name': name,
        'target_systems': list(target_systems),
        'cc': 'mpicc.openmpi',
        'cxx': 'mpicxx.openmpi',
        'ftn': 'mpif90.openmpi',
        'features': ['mpi', 'openmpi', 'gnu', 'openblas', *extra_features],
        'env_vars': [
            *_OPENMPI_ROOT,
            # More ranks than cores is legitimate here (tests, 4-rank runs).
            ['OMPI_MCA_rmaps_base_oversubscribe', '1'],
            ['PATH', f'{WRAPPERS}/openmpi:$PATH'],
        ],
        'extras': {'mpi': 'openmpi', 'compiler': 'gcc', 'blas': 'openblas'},
    }


def gnu_mpich(name='gnu-mpich', extra_features=(), target_systems=('*',)):
    """GCC with Debian's MPICH 4.0 (our stand-in for MVAPICH) and OpenBLAS."""
    return {
        'name': name,
        'target_systems': list(target_systems),
        'cc': 'mpicc.mpich',
        'cxx': 'mpicxx.mpich',
        'ftn': 'mpif90.mpich',
        'features': ['mpi', 'mpich', 'gnu', 'openblas', *extra_features],
        'env_vars': [
            ['PATH', f'{WRAPPERS}/mpich:$PATH'],
        ],
        'extras': {'mpi': 'mpich', 'compiler': 'gcc', 'blas': 'openblas'},
    }


def general(**overrides):
    """General settings shared by every system."""
    settings = {
        'report_file': os.path.join(
            PROJECT, 'results', 'reports', 'run-report-{sessionid}.json'
        ),
    }
    settings.update(overrides)
    return [settings]


def host_memory_bytes():
    """MemTotal of the host that loads the configuration, in bytes (0 if unknown)."""
    try:
        with open('/proc/meminfo') as meminfo:
            for line in meminfo:
                if line.startswith('MemTotal:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_kind():
    """vendor-family-model of the host that loads the configuration
    (``AMD-25-17``), the key that references are indexed by.

    ``CLUSTERBENCH_CPUINFO`` names another cpuinfo file: the machine is then
    taken to be of that kind (tests; a login node describing its compute
    nodes). ``'unknown'`` when the file names no vendor, family and model.
    """
    from clusterbench.hwinfo import cpu_kind_of_file

    return cpu_kind_of_file(os.environ.get('CLUSTERBENCH_CPUINFO', '/proc/cpuinfo'))


def storage(**overrides):
    """ReFrame's results database, so that runs can be compared with history."""
    settings = {
        'enable': True,
        'sqlite_db_file': os.path.join(PROJECT, 'results', 'results.db'),
    }
    settings.update(overrides)
    return [settings]

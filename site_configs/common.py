"""Parts shared by every clusterbench site configuration.

A system file (one per system, e.g. ``local.py``) composes these with
``runpy.run_path`` instead of copying them. Nothing here names a system: the
programming environments describe Debian's toolchains, and each declares what
it offers as ReFrame *features*, which checks select on.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def launch_directory():
    """The directory the command was started in.

    Not ``os.getcwd()``: ReFrame imports a configuration file from inside the
    file's own directory, which from a wheel is site-packages, or the
    centre's ``site_configs/``. The shell's ``$PWD`` is where the command was
    started; a program that starts ReFrame elsewhere without a shell sets
    ``PWD`` (or ``CLUSTERBENCH_RESULTS``, as ``clusterbench run`` does).
    """
    if 'reframe.frontend.cli' not in sys.modules:
        return os.getcwd()  # clusterbench itself reads it, where it runs
    # (clusterbench sets PWD for the ReFrame it starts: core/startedhere.py)
    pwd = os.environ.get('PWD', '')
    return pwd if os.path.isabs(pwd) and os.path.isdir(pwd) else os.getcwd()


# Results go beside the checkout; from a wheel (read-only package data) to
# the directory the command was started in.
PROJECT = (
    os.path.dirname(HERE)
    if os.path.isfile(os.path.join(os.path.dirname(HERE), 'pyproject.toml'))
    else launch_directory()
)
WRAPPERS = os.path.join(HERE, 'bin')
#: The results root: `clusterbench run --results DIR` sets CLUSTERBENCH_RESULTS
#: for its ReFrame, so that the database and perflogs go under DIR with the
#: session; else results/ beside the checkout, or in the launch directory.
RESULTS = os.environ.get('CLUSTERBENCH_RESULTS') or os.path.join(PROJECT, 'results')

# Open MPI refuses root without these two: CI, containers and the test
# systems run as root. Only then: a site's users never need them.
_OPENMPI_ROOT = (
    [
        ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
        ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
    ]
    if os.geteuid() == 0
    else []
)


def gnu_openmpi(
    name='gnu-openmpi',
    extra_features=(),
    target_systems=('*',),
    modules=(),
    env_vars=(),
):
    """GCC with Open MPI and OpenBLAS: Debian's Open MPI 4.1 by default, or
    the site's from *modules* (e.g. ``['gcc/13.3.0', 'openmpi/5.0.8']``)."""
    if modules:
        return module_environment(
            name, 'openmpi', modules, extra_features, target_systems, env_vars
        )
    environ = {
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
            *env_vars,
        ],
        'extras': {'mpi': 'openmpi', 'compiler': 'gcc', 'blas': 'openblas'},
    }
    return _checked(environ)


def gnu_mpich(
    name='gnu-mpich', extra_features=(), target_systems=('*',), modules=(), env_vars=()
):
    """GCC with MPICH and OpenBLAS: Debian's MPICH 4.0 (our stand-in for
    MVAPICH) by default, or the site's from *modules*."""
    if modules:
        return module_environment(
            name, 'mpich', modules, extra_features, target_systems, env_vars
        )
    environ = {
        'name': name,
        'target_systems': list(target_systems),
        'cc': 'mpicc.mpich',
        'cxx': 'mpicxx.mpich',
        'ftn': 'mpif90.mpich',
        'features': ['mpi', 'mpich', 'gnu', 'openblas', *extra_features],
        'env_vars': [
            ['PATH', f'{WRAPPERS}/mpich:$PATH'],
            *env_vars,
        ],
        'extras': {'mpi': 'mpich', 'compiler': 'gcc', 'blas': 'openblas'},
    }
    return _checked(environ)


#: ReFrame feature of each compiler (``+gnu`` selects GCC, as for Debian's).
COMPILER_FEATURES = {'gcc': 'gnu', 'intel-oneapi-compilers': 'intel'}


def module_environment(
    name,
    mpi,
    modules,
    extra_features=(),
    target_systems=('*',),
    env_vars=(),
    compiler='gcc',
    blas='openblas',
    extras=None,
):
    """An environment whose compiler, MPI and BLAS come from *modules* (Lmod,
    Tcl, or a Spack-generated tree): the MPI's own wrappers on the PATH they
    set. *mpi*, *compiler* and *blas* are Spack package names; the checks
    match them against their parameters (``extras``). *extras* adds to them
    (``{'npb_module': 'npb/3.4.3'}``: the NPB this environment runs)."""
    root = _OPENMPI_ROOT if mpi == 'openmpi' else []
    environ = {
        'name': name,
        'target_systems': list(target_systems),
        'modules': list(modules),
        'cc': 'mpicc',
        'cxx': 'mpicxx',
        'ftn': 'mpif90',
        'features': [
            'mpi',
            mpi,
            COMPILER_FEATURES.get(compiler, compiler),
            blas,
            *extra_features,
        ],
        'env_vars': [*root, *env_vars],
        'extras': {'mpi': mpi, 'compiler': compiler, 'blas': blas, **(extras or {})},
    }
    return _checked(environ)


def _checked(environ):
    """*environ*, if none of its names can run as a command: ReFrame writes
    its modules (``module load NAME``) and variable names into job scripts
    unquoted. Else a ConfigError naming the line of the site config that
    declared it (ReFrame prints it as one line; ``clusterbench run`` too)."""
    from clusterbench.core import errors, scriptnames

    found = scriptnames.environment_problem(environ)
    if found is None:
        return environ
    from reframe.core.exceptions import ConfigError

    class BadConfigName(ConfigError, errors.ClusterbenchError):
        pass

    # The first caller outside this file: the site config's line.
    frame = sys._getframe(1)
    while frame.f_back and frame.f_code.co_filename == _checked.__code__.co_filename:
        frame = frame.f_back
    raise BadConfigName(f'{frame.f_code.co_filename}:{frame.f_lineno}: {found}')


def general(**overrides):
    """General settings shared by every system."""
    _stage_under_results()
    settings = {
        'report_file': os.path.join(RESULTS, 'reports', 'run-report-{sessionid}.json'),
    }
    settings.update(overrides)
    return [settings]


def _stage_under_results():
    """Plain ``reframe`` puts its stage/ and output/ under the results root
    too, beside the database and the perflogs (ReFrame's default is the
    directory it runs in). As the ``--prefix`` that `clusterbench run` gives
    each session, it is used instead of a system's ``prefix``; ``--prefix``
    or ``RFM_PREFIX`` move them. Only when ReFrame loads the configuration:
    clusterbench itself only reads it."""
    if 'reframe.frontend.cli' in sys.modules:
        os.environ.setdefault('RFM_PREFIX', RESULTS)


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
    from clusterbench.machine.hwinfo import cpu_kind_of_file

    return cpu_kind_of_file(os.environ.get('CLUSTERBENCH_CPUINFO', '/proc/cpuinfo'))


def storage(**overrides):
    """ReFrame's results database, so that runs can be compared with history
    (a judged check refuses to run where it cannot be written:
    clusterbench/checks/plugins/storedhistory.py)."""
    settings = {
        'enable': True,
        'sqlite_db_file': os.path.join(RESULTS, 'results.db'),
    }
    settings.update(overrides)
    return [settings]


#: Every system's perflogs under one directory (ReFrame's default,
#: ./perflogs, is relative to where ReFrame runs, so sessions scatter them).
#: CLUSTERBENCH_PERFLOGDIR, or ReFrame's --perflogdir, moves it.
PERFLOG_DIR = os.path.join(RESULTS, 'perflogs')

#: One line per test case: when, what, where, ReFrame's result, clusterbench's
#: verdict (its kind, then with the figures it names: ``SLOWER|SLOWER
#: (gflops)``), the nodes and their CPU identity, then every figure. Every
#: handler a site adds (syslog, httpjson) gets the same fields: check_verdict,
#: check_verdict_kind, check_job_nodelist, check_cpu_kind,
#: check_machine_identity (see docs/machine-outputs.md).
PERFLOG_FORMAT = (
    '%(check_job_completion_time)s|reframe %(version)s|%(check_display_name)s|'
    '%(check_system)s:%(check_partition)s|%(check_environ)s|'
    '%(check_jobid)s|%(check_result)s|%(check_verdict_kind)s|%(check_verdict)s|'
    '%(check_job_nodelist)s|%(check_cpu_kind)s|%(check_perfvalues)s'
)
#: Per figure (ReFrame writes the header: <figure>_value|<figure>_unit|...).
PERFVARS_FORMAT = (
    '%(check_perf_value)s|%(check_perf_unit)s|%(check_perf_ref)s|'
    '%(check_perf_lower_thres)s|%(check_perf_upper_thres)s|%(check_perf_result)s|'
)


def logging(perflog_handlers=()):
    """ReFrame's logging: its usual output and debug log, and the perflogs
    under PERFLOG_DIR/<system>/<partition>/<test>.log. *perflog_handlers* adds
    handlers, e.g. ReFrame's ``httpjson`` for an Elastic or VictoriaMetrics
    site (see docs/report.md, "Where the history is kept", and docs/machine-outputs.md,
    "ReFrame's perflog"). An ``httpjson`` handler gets a ``timeout`` (10 s
    unless given) and a finite ``retry_timeout``: a store that never answers
    must not hang the session (clusterbench.site.httpperflog)."""
    from clusterbench.site import httpperflog

    perflog_handlers = [httpperflog.bounded(h) for h in perflog_handlers]
    return [
        {
            # ReFrame's own defaults for its output and its debug log file.
            'handlers$': [
                {
                    'type': 'stream',
                    'name': 'stdout',
                    'level': 'info',
                    'format': '%(message)s',
                }
            ],
            'handlers': [
                {
                    'type': 'file',
                    'level': 'debug2',
                    'format': '[%(asctime)s] %(levelname)s: %(check_info)s: '
                    '%(message)s',
                    'append': False,
                }
            ],
            'handlers_perflog': [
                {
                    'type': 'filelog',
                    'basedir': os.environ.get('CLUSTERBENCH_PERFLOGDIR') or PERFLOG_DIR,
                    'prefix': '%(check_system)s/%(check_partition)s',
                    'level': 'info',
                    'format': PERFLOG_FORMAT,
                    'format_perfvars': PERFVARS_FORMAT,
                    'append': True,
                },
                *perflog_handlers,
            ],
        }
    ]

"""What ``clusterbench site init`` reads from a host: the programming
environments with the versions of their MPI and compiler. (What it reads of
the scheduler's partitions and nodes: :mod:`clusterbench.site.scheduler`;
what it asks the compute nodes themselves: :mod:`clusterbench.site.nodeprobe`.)

Every reader returns facts or a :class:`Todo` that says why the fact could
not be read; nothing is guessed. Commands run with a timeout and their
failures become Todos, never tracebacks.
"""

import dataclasses
import os
import re
import shutil
import subprocess

from clusterbench.machine import softfacts


@dataclasses.dataclass(frozen=True)
class Todo:
    """A fact that could not be determined, and why."""

    reason: str


def command(args, timeout=60, env=None):
    """(exit code, stdout, stderr) of *args*; 127 when it cannot be run."""
    try:
        proc = subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        return 127, '', f'{args[0]}: not found'
    except subprocess.TimeoutExpired:
        return 124, '', f'{" ".join(args)}: no answer within {timeout} s'
    return proc.returncode, proc.stdout, proc.stderr


def said(*texts):
    """The last line a failed command printed: reasons stay one line."""
    text = re.sub(r'\x1b\[[0-9;]*m', '', '\n'.join(texts))  # ReFrame's colours
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else 'no output'


# -- programming environments -------------------------------------------------


@dataclasses.dataclass
class Environ:
    """A programming environment found on this host."""

    name: str
    mpi: str
    #: 'debian' (the Debian wrappers common.py knows) or 'modules'.
    kind: str
    modules: list = dataclasses.field(default_factory=list)
    compiler: object = 'gcc'
    blas: object = 'openblas'
    #: The versions found (for the Spack environment's pins), or Todos.
    mpi_version: object = None
    compiler_version: object = None
    #: The system OpenBLAS as a Spack external spec (``openblas@0.3.21
    #: threads=pthreads``), for environments on PATH; else None.
    blas_external: object = None
    #: Features of the benchmarks installed for it (``hpcc``, ``netpipe``,
    #: ``osu``, ``imb``) and extras (``npb_module``): clusterbench.site.benchfind.
    features: list = dataclasses.field(default_factory=list)
    extras: dict = dataclasses.field(default_factory=dict)


#: Module names (before the first '/') of each MPI flavour, compiler and BLAS.
MPI_MODULES = {
    'openmpi': 'openmpi',
    'mpich': 'mpich',
    'mvapich': 'mvapich',
    'mvapich2': 'mvapich2',
    'intel-oneapi-mpi': 'intel-oneapi-mpi',
    'impi': 'intel-oneapi-mpi',
}
COMPILER_MODULES = {
    'gcc': 'gcc',
    'intel-oneapi-compilers': 'intel-oneapi-compilers',
    'aocc': 'aocc',
    'nvhpc': 'nvhpc',
}
BLAS_MODULES = {
    'openblas': 'openblas',
    'intel-oneapi-mkl': 'intel-oneapi-mkl',
    'amdblis': 'amdblis',
    'blis': 'blis',
}


def modules_system():
    """ReFrame's name of the module system here: lmod, tmod4 or nomod."""
    if os.environ.get('LMOD_CMD'):
        return 'lmod'
    if os.environ.get('MODULES_CMD') or shutil.which('modulecmd'):
        return 'tmod4'
    return 'nomod'


def available_modules():
    """``module -t avail`` as a list of names (empty without modules)."""
    system = modules_system()
    if system == 'lmod':
        code, out, err = command([os.environ['LMOD_CMD'], 'bash', '-t', 'avail'])
    elif system == 'tmod4':
        cmd = os.environ.get('MODULES_CMD') or shutil.which('modulecmd')
        code, out, err = command([cmd, 'bash', '-t', 'avail'])
    else:
        return []
    # Both print the listing on stderr (stdout carries shell code).
    return parse_module_list(err + out)


def parse_module_list(text):
    """Module names of a terse ``module -t avail`` listing (no headers, no
    marks such as ``(default)``)."""
    names = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.endswith(':') or line.startswith('-'):
            continue
        name = re.sub(r'\s*\(.*\)$', '', line)
        if '/' in name and not name.endswith('/'):
            names.append(name)
    return names


#: Environment names start with the compiler as common.py's do (gnu-openmpi).
COMPILER_FEATURE = {'gcc': 'gnu', 'intel-oneapi-compilers': 'intel'}


def _family(module, table):
    head = module.split('/')[0].lower()
    return table.get(head)


def _version_key(module):
    return [
        (0, int(p), '') if p.isdigit() else (1, 0, p)
        for p in re.split(r'[./-]', module)
    ]


def _only(candidates, table, load, what, ask):
    """The family of the one module in *candidates* (appended to *load*), or a
    Todo naming them all."""
    if len(candidates) == 1:
        load.append(candidates[0])
        return _family(candidates[0], table)
    named = ', '.join(candidates) or 'none'
    return Todo(f'{len(candidates)} {what} ({named}): {ask}')


def environs_from_modules(modules):
    """One environment per MPI module, with the compiler and BLAS modules
    where there is exactly one candidate (else a Todo naming them)."""
    mpis = [m for m in modules if _family(m, MPI_MODULES)]
    compilers = [m for m in modules if _family(m, COMPILER_MODULES)]
    blases = [m for m in modules if _family(m, BLAS_MODULES)]
    found = []
    for mpi_module in sorted(mpis, key=_version_key):
        mpi = _family(mpi_module, MPI_MODULES)
        # Spack's module names carry the compiler: openmpi/5.0.8-gcc-13.3.0.
        tagged = [c for c in compilers if c.split('/', 1)[1] in mpi_module]
        named = [
            c
            for c in compilers
            if f'-{c.split("/")[0]}-{c.split("/", 1)[1]}' in mpi_module
        ]
        load = []
        compiler = _only(
            named or tagged or compilers,
            COMPILER_MODULES,
            load,
            f'compiler modules for {mpi_module}',
            'name the one it was built with',
        )
        load.append(mpi_module)
        blas = _only(blases, BLAS_MODULES, load, 'BLAS modules', 'name the one to use')
        cname = compiler if isinstance(compiler, str) else 'cc'
        name = f'{COMPILER_FEATURE.get(cname, cname)}-{mpi}'
        if any(e.name == name for e in found):
            # The version, as ReFrame names go: gnu-openmpi-5_0_8.
            version = mpi_module.split('/', 1)[1].split('-')[0]
            name += '-' + re.sub(r'[^A-Za-z0-9_]', '_', version)
        found.append(
            Environ(
                name=name,
                mpi=mpi,
                kind='modules',
                modules=load,
                compiler=compiler,
                blas=blas,
                mpi_version=_module_version(mpi_module),
                compiler_version=_module_version(
                    next((m for m in load if _family(m, COMPILER_MODULES)), None)
                ),
            )
        )
    return found


def _module_version(module):
    """The version of a module named ``name/version[-suffix]`` (Spack's
    ``openmpi/5.0.8-gcc-13.3.0``: 5.0.8), or a Todo."""
    found = re.match(r'[^/]+/(\d[\w.]*)', module or '')
    if found:
        return found.group(1)
    return Todo(f'no version in the module name {module!r}')


#: How each flavour's wrapper or tool tells its version: command, pattern.
VERSION_COMMANDS = {
    'openmpi': (['{wrapper}', '--showme:version'], r'Open MPI (\d[\w.]*)'),
    'mpich': (['mpichversion'], r'MPICH Version:\s*(\d[\w.]*)'),
    'mvapich2': (['mpiname', '-v'], r'(\d[\w.]*)'),
    'gcc': (['gcc', '-dumpfullversion'], r'(\d[\w.]*)'),
}


def tool_version(what, wrapper='mpicc'):
    """The version *what* (a key of VERSION_COMMANDS) reports here, or a Todo."""
    args, pattern = VERSION_COMMANDS[what]
    args = [a.format(wrapper=wrapper) for a in args]
    code, out, err = command(args)
    found = re.search(pattern, out + err) if code == 0 else None
    if found:
        return found.group(1)
    return Todo(f'{" ".join(args)} told no version: {said(out, err)}')


def _with_versions(env, wrapper='mpicc'):
    env.mpi_version = tool_version(env.mpi, wrapper)
    env.compiler_version = tool_version('gcc')
    return env


#: Debian's MPI wrappers, which common.py's builders use: wrapper -> flavour.
DEBIAN_WRAPPERS = {'mpicc.openmpi': 'openmpi', 'mpicc.mpich': 'mpich'}


def _openblas_installed():
    # /sbin is not on a user's PATH on Debian.
    code, out, _ = command([shutil.which('ldconfig') or '/sbin/ldconfig', '-p'])
    return code == 0 and 'libopenblas' in out


#: OpenBLAS's threading, from its library's directory or file name
#: (Debian: openblas-pthread/libopenblasp-r0.3.21.so) -> Spack's variant.
_OPENBLAS_THREADS = (
    ('openmp', 'openmp'),
    ('libopenblaso', 'openmp'),
    ('pthread', 'pthreads'),
    ('libopenblasp', 'pthreads'),
    ('serial', 'none'),
)


def openblas_external(facts):
    """The OpenBLAS the linker finds as a Spack spec, from what the library
    says of itself (:func:`softfacts.probe_libraries`), or None."""
    found = (facts or {}).get('openblas') or {}
    version = re.match(r'OpenBLAS (\d+(?:\.\d+)+)', found.get('config') or '')
    if not version:
        return None
    path = found.get('path') or ''
    threads = next((t for key, t in _OPENBLAS_THREADS if key in path), None)
    return f'openblas@{version.group(1)}' + (f' threads={threads}' if threads else '')


def environs_from_path():
    """Environments from the MPI wrappers on PATH: Debian's, or a plain mpicc."""
    blas = (
        'openblas'
        if _openblas_installed()
        else Todo('no libopenblas in the linker cache (ldconfig -p): name the BLAS')
    )
    external = (
        openblas_external(softfacts.probe_libraries()) if blas == 'openblas' else None
    )
    found = [
        _with_versions(
            Environ(
                name=f'gnu-{mpi}',
                mpi=mpi,
                kind='debian',
                blas=blas,
                blas_external=external,
            ),
            wrapper,
        )
        for wrapper, mpi in DEBIAN_WRAPPERS.items()
        if shutil.which(wrapper)
    ]
    if found or not shutil.which('mpicc'):
        return found
    code, _, _ = command(['mpicc', '-showme:version'])
    if code == 0:
        mpi = 'openmpi'
    elif shutil.which('mpichversion'):
        mpi = 'mpich'
    elif shutil.which('mpiname'):
        mpi = 'mvapich2'
    else:
        return [
            Environ(
                name='gnu-mpi',
                mpi=Todo('mpicc on PATH, but neither Open MPI, MPICH nor MVAPICH'),
                kind='modules',
                blas=blas,
            )
        ]
    return [
        _with_versions(Environ(name=f'gnu-{mpi}', mpi=mpi, kind='modules', blas=blas))
    ]


def environs():
    """(module system, environments): modules if there are any, else PATH."""
    system = modules_system()
    if system != 'nomod':
        found = environs_from_modules(available_modules())
        if found:
            return system, found
    return 'nomod', environs_from_path()

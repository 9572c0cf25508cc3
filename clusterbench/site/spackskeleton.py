"""The ``spack_envs/<system>/<partition>/spack.yaml`` that ``clusterbench
site init`` writes: one environment for the partition's MPI flavours, pinned
to what site init found (compiler, BLAS, portable target, each MPI's version,
and the toolchain found on PATH as Spack externals), so that it follows the
conventions ``clusterbench spack-envs`` checks and Spack concretizes it as it
is. What was not found is a ``# TODO`` line instead of a pin.

Its includes are relative: the shared files of ``spack_envs/common/`` are
copied into the site's own tree when it has none (never overwritten), not
named by an absolute path into clusterbench's installation.
"""

import os
import shutil

from clusterbench.core import paths
from clusterbench.site.sitefacts import Todo
from clusterbench.site.spackmanifest import PORTABLE_TARGETS

#: The shared files every generated environment includes.
INCLUDES = ('benchmarks.yaml', 'reproducible.yaml')


def portable_target(arch):
    """The portable Spack target (``x86_64_v3``) of a micro-architecture
    ReFrame detected (``zen3``), or a Todo: the lock then runs on any node of
    the partition's generation and later."""
    try:
        import archspec.cpu
    except ImportError:
        return Todo('archspec is not installed: name the target')
    target = archspec.cpu.TARGETS.get(str(arch))
    if target is None:
        return Todo(f'{arch!r}: not a micro-architecture archspec knows')
    names = [target.name, *(t.name for t in target.ancestors)]
    found = [name for name in names if name in PORTABLE_TARGETS]
    return found[0] if found else Todo(f'{arch}: no portable target above it')


def oldest_target(targets):
    """The oldest of several partitions' portable targets (the one every node
    runs), or the first Todo."""
    for target in targets:
        if isinstance(target, Todo):
            return target
    known = [t for t in targets if t in PORTABLE_TARGETS]
    if not known:
        return Todo('no node was detected')
    return min(known, key=PORTABLE_TARGETS.index)


def _one(values, what):
    """The one value all environments agree on, or a Todo naming them."""
    found = {v for v in values if isinstance(v, str)}
    todos = [v for v in values if isinstance(v, Todo)]
    if len(found) == 1 and not todos:
        return found.pop()
    if todos:
        return todos[0]
    return Todo(f'the environments differ in {what} ({", ".join(sorted(found))})')


def _pin(lines, key, value, indent='    '):
    """``key: require: [value]`` or a TODO line saying why not."""
    if isinstance(value, Todo):
        lines.append(f'{indent}# TODO: {key}: {value.reason}')
    else:
        lines += [f'{indent}{key}:', f'{indent}  require: [{value}]']


def _compiler_external(env):
    """The compiler on PATH as a Spack external (Spack 1.x: a package)."""
    gcc = shutil.which('gcc')
    if not gcc or not isinstance(env.compiler_version, str):
        return []
    compilers = {
        'c': gcc,
        'cxx': shutil.which('g++'),
        'fortran': shutil.which('gfortran'),
    }
    return [
        '    gcc:',
        '      buildable: false',
        '      externals:',
        f"      - spec: gcc@{env.compiler_version} languages:='c,c++,fortran'",
        f'        prefix: {os.path.dirname(os.path.dirname(gcc))}',
        '        extra_attributes:',
        '          compilers:',
        *(f'            {k}: {v}' for k, v in compilers.items() if v),
    ]


def _blas_external(env):
    """The system OpenBLAS as an external: Spack would build its own
    otherwise, and the benchmarks would not use the library the node has."""
    if not env.blas_external:
        return []
    return [
        '    openblas:',
        '      buildable: false',
        '      externals:',
        f'      - spec: {env.blas_external}',
        '        prefix: /usr',
    ]


def _mpi_lines(env):
    """The MPI's version pin and, for one found on PATH (Debian's wrappers in
    /usr/bin), the MPI itself as an external; or a TODO."""
    if not isinstance(env.mpi_version, str):
        return [f'    # TODO: {env.mpi} version: {env.mpi_version.reason}']
    lines = [f'    {env.mpi}:', f"      require: ['@{env.mpi_version}']"]
    if env.kind == 'debian':
        lines += [
            '      buildable: false',
            '      externals:',
            f'      - spec: {env.mpi}@{env.mpi_version}',
            '        prefix: /usr',
        ]
    return lines


def text(system, partition, environs, target):
    """The generated spack.yaml of *partition* of *system*."""
    usable = [e for e in environs if isinstance(e.mpi, str)]
    mpis = sorted({e.mpi for e in usable})
    compiler = _one([e.compiler for e in usable], 'compiler')
    version = _one([e.compiler_version for e in usable], 'compiler version')
    if isinstance(compiler, str) and isinstance(version, str):
        compiler = f'{compiler}@{version}'
    elif isinstance(compiler, str):
        compiler = version
    blas = _one([e.blas for e in usable], 'BLAS')
    lines = [
        f'# Partition `{partition}` of `{system}`, by clusterbench site init,',
        '# pinned to what it found (spack_envs/example-site/ is a worked example).',
        '# Concretize (spack_envs/README.md), commit spack.yaml and spack.lock;',
        '# `clusterbench spack-envs` checks both.',
        'spack:',
        '  include:',
        *(f'  - ../../common/{name}' for name in INCLUDES),
        '  definitions:',
        f'  - mpis: [{", ".join(mpis)}]',
        '  specs:',
        '  - matrix:',
        '    - [$mpi_benchmarks]',
        '    - [$^mpis]',
        '  - $serial_benchmarks',
        '  packages:',
    ]
    for lang in ('c', 'cxx', 'fortran'):
        _pin(lines, lang, compiler)
    for virtual in ('blas', 'lapack'):
        _pin(lines, virtual, blas)
    _pin(lines, 'all', target if isinstance(target, Todo) else f'target={target}')
    lines += ['    mpi:', '      require:', f'      - one_of: [{", ".join(mpis)}]']
    for env in sorted(usable, key=lambda e: e.mpi):
        lines += _mpi_lines(env)
    on_path = [e for e in usable if e.kind == 'debian']
    if on_path:
        lines += _compiler_external(on_path[0])
        lines += _blas_external(on_path[0])
    else:
        lines += [
            '    # TODO: the compiler and MPI as externals (spack compiler find and',
            '    # spack external find with the modules loaded), buildable: false.',
        ]
    if len(mpis) > 1:
        lines += ['  concretizer:', '    unify: false']
    lines += ['  view: false']
    return '\n'.join(lines) + '\n'


def shared_files(envs_dir):
    """Copy clusterbench's ``common/`` files the generated environments
    include into *envs_dir* where it has none yet; the paths written."""
    written = []
    ours = os.path.join(paths.get('spack_envs'), 'common')
    for name in INCLUDES:
        dest = os.path.join(envs_dir, 'common', name)
        if os.path.exists(dest) or os.path.abspath(dest) == os.path.join(ours, name):
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(ours, name), dest)
        written.append(dest)
    return written

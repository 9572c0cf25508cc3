"""An NPB 3.x (MPI) source tree: what kind it is, its config/make.def, its builds.

NPB builds one benchmark and class at a time with ``make <bench> CLASS=<class>``
from the settings in ``config/make.def``. Two generations of the tree matter:

* 3.4.x: Fortran compiler variable ``MPIFC``; the process count is chosen at run
  time, executables are named ``<bench>.<class>.x``;
* 3.3.x: ``MPIF77``; the process count is compiled in (``NPROCS=``), executables
  are named ``<bench>.<class>.<nprocs>``.

The kind is read from the tree itself (``sys/make.common``), not from its name.
NPB's Fortran passes buffers of several types to the same MPI routine, which
gfortran 10 and later reject unless given ``-fallow-argument-mismatch``; the
releases before 3.4.1 also write hexadecimal constants as ``X'...'`` in
``common/randi8.f``, which gfortran 10 and later reject unless given
``-fallow-invalid-boz``.
"""

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass

from clusterbench.core.errors import ClusterbenchError

MAKEDEF = os.path.join('config', 'make.def')
_MAKE_COMMON = os.path.join('sys', 'make.common')
_VERSION = re.compile(r'^#define\s+VERSION\s+"([\d.]+)"', re.M)
_LEGACY_BOZ = re.compile(r"\bX'[0-9A-Fa-f]+'")
_GNU_FORTRAN = re.compile(r'^GNU Fortran\b.*?\s(\d+)\.\d+(?:\.\d+)?\s*$')


class NPBSourceError(ClusterbenchError):
    """Not a usable NPB 3.x MPI source tree, or a compiler we cannot ask."""


@dataclass(frozen=True)
class SourceTree:
    """What the build needs to know about one unpacked NPB MPI release."""

    path: str
    version: str
    fortran_variable: str
    nprocs_at_compile_time: bool
    legacy_boz: bool = False

    def executable(self, benchmark, npb_class, nprocs):
        """Name NPB gives the executable (placed in the tree's ``bin/``)."""
        return executable_name(
            benchmark, npb_class, nprocs if self.nprocs_at_compile_time else None
        )

    def make_command(self, benchmark, npb_class, nprocs):
        """``make <bench> CLASS=<class>`` (3.3 also needs ``NPROCS=``)."""
        cmd = ['make', benchmark, f'CLASS={npb_class}']
        if self.nprocs_at_compile_time:
            cmd.append(f'NPROCS={nprocs}')
        return cmd


def executable_name(benchmark, npb_class, nprocs=None):
    """``bt.C.x`` (3.4 naming) or, with *nprocs*, ``bt.C.4`` (3.3 naming)."""
    return f'{benchmark}.{npb_class}.{nprocs if nprocs else "x"}'


def inspect_tree(path):
    """Describe the NPB MPI tree at *path*; a one-line error if it is not one."""
    if not os.path.isdir(path):
        raise NPBSourceError(f'{path}: NPB source tree not found')
    common = os.path.join(path, _MAKE_COMMON)
    try:
        with open(common) as f:
            make_common = f.read()
    except OSError:
        raise NPBSourceError(
            f'{path}: not an NPB 3.x MPI source tree (no {_MAKE_COMMON}); '
            f'point npb_source at the NPB3.x-MPI directory'
        ) from None
    if not os.path.isfile(os.path.join(path, 'Makefile')):
        raise NPBSourceError(f'{path}: NPB source tree has no top-level Makefile')
    program = re.search(r'^PROGRAM\s*=\s*(.*)$', make_common, re.M)
    if not program:
        raise NPBSourceError(f'{common}: no PROGRAM line; not an NPB make.common')
    compile_time = 'NPROCS' in program.group(1)
    fortran = 'MPIF77' if '$(MPIF77)' in make_common else 'MPIFC'
    return SourceTree(
        path=os.path.abspath(path),
        version=_tree_version(path, compile_time),
        fortran_variable=fortran,
        nprocs_at_compile_time=compile_time,
        legacy_boz=_has_legacy_boz(path),
    )


def _has_legacy_boz(path):
    try:
        with open(os.path.join(path, 'common', 'randi8.f')) as f:
            return bool(_LEGACY_BOZ.search(f.read()))
    except OSError:
        return False


def _tree_version(path, compile_time):
    try:
        with open(os.path.join(path, 'sys', 'setparams.c')) as f:
            found = _VERSION.search(f.read())
    except OSError:
        found = None
    if found:
        return found.group(1)
    return '3.3' if compile_time else '3.4'


def gfortran_major(compiler):
    """Major version of gfortran behind *compiler* (an MPI wrapper or not).

    ``None`` when the compiler is not gfortran; a one-line error when it
    cannot be run at all.
    """
    if not shutil.which(compiler.split()[0]):
        raise NPBSourceError(f'{compiler}: Fortran compiler not found on PATH')
    try:
        out = subprocess.run(
            [*compiler.split(), '--version'],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError) as err:
        raise NPBSourceError(f'{compiler} --version: {err}') from None
    first = out.splitlines()[0] if out.strip() else ''
    found = _GNU_FORTRAN.match(first.strip())
    return int(found.group(1)) if found else None


def fortran_flags(base='-O3', gfortran=None, legacy_boz=False, large_static_data=False):
    """FFLAGS for NPB with this Fortran compiler.

    *gfortran* is the gfortran major version (``None`` for another compiler);
    *legacy_boz* says the tree writes ``X'...'`` constants. 3.3's arrays are
    static; above 2 GiB per process they need the medium code model on x86-64
    (*large_static_data*).
    """
    flags = base.split()
    if gfortran is not None and gfortran >= 10:
        flags.append('-fallow-argument-mismatch')
        if legacy_boz:
            flags.append('-fallow-invalid-boz')
    if gfortran is not None and large_static_data:
        flags.append('-mcmodel=medium')
    return ' '.join(dict.fromkeys(flags))


def makedef(
    tree,
    fc,
    cc,
    fflags='-O3',
    cflags='-O3',
    utility_cc='cc',
    rand='randi8',
    origin='clusterbench',
):
    """The text of ``config/make.def`` for *tree* (a :class:`SourceTree`).

    Compilers and flags are words of make's recipes, which a shell runs: each
    word is quoted for the shell and its ``$`` kept from make.
    """
    fc, cc, fflags, cflags = map(_recipe_words, (fc, cc, fflags, cflags))
    fvar = tree.fortran_variable
    lines = [
        f'# NPB {tree.version} config/make.def written by {origin}.',
        '# Compilers and flags of the programming environment; regenerated for',
        '# every build, do not edit.',
        f'{fvar} = {fc}',
        f'FLINK = $({fvar})',
        'FMPI_LIB =',
        'FMPI_INC =',
        f'FFLAGS = {fflags}',
        'FLINKFLAGS = $(FFLAGS)',
        f'MPICC = {cc}',
        'CLINK = $(MPICC)',
        'CMPI_LIB =',
        'CMPI_INC =',
        f'CFLAGS = {cflags}',
        'CLINKFLAGS = $(CFLAGS)',
        f'CC = {utility_cc}',
        'BINDIR = ../bin',
        f'RAND = {rand}',
    ]
    return '\n'.join(lines) + '\n'


def _recipe_words(text):
    return ' '.join(shlex.quote(w).replace('$', '$$') for w in str(text).split())


def build_commands(tree, benchmark, npb_class, nprocs, makedef_file):
    """Shell commands that build one executable in a copy of *tree* (cwd).

    Objects and executables that came with the copied tree are removed first:
    they may have been made by another compiler or MPI.
    """
    exe = tree.executable(benchmark, npb_class, nprocs)
    return [
        'make clean >/dev/null',
        f'rm -f bin/{exe}',
        'mkdir -p bin',
        f'cp {makedef_file} {MAKEDEF}',
        ' '.join(tree.make_command(benchmark, npb_class, nprocs)),
        f'test -x bin/{exe}',
    ]

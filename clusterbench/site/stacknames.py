"""Software-stack names: the MPI libraries, compilers and BLAS libraries
clusterbench knows, and every name each one goes by.

One table, read by the checks (what to build, how to start it), the Spack
environment checker (which packages provide MPI or BLAS) and the report
(the stack of a test case, from its environment's name). A new MPI or BLAS
is added here once.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class MPI:
    #: As checks are parametrised and the report shows it.
    name: str
    #: Other names for it in environment names and ``extras.mpi``.
    aliases: tuple = ()
    #: The Spack packages that provide it.
    spack: tuple = ()
    #: How its ``mpirun`` takes options: ``'openmpi'`` or ``'hydra'``.
    launcher: str = None


MPIS = (
    MPI('openmpi', ('ompi',), ('openmpi',), 'openmpi'),
    MPI('mvapich', ('mvapich2',), ('mvapich', 'mvapich2'), 'hydra'),
    MPI('mpich', ('cray-mpich',), ('mpich',), 'hydra'),
    MPI('intelmpi', ('impi',), ('intel-oneapi-mpi',), 'hydra'),
    MPI('hpcx'),
)

#: Every name an MPI goes by in an environment (names and aliases).
MPI_NAMES = tuple(n for m in MPIS for n in (m.name, *m.aliases))

#: Spack packages that provide MPI.
SPACK_MPI_PROVIDERS = tuple(p for m in MPIS for p in m.spack)

#: MPI flavours a check may be built against (a partition offers a subset).
BUILT_MPIS = ('openmpi', 'mvapich', 'mpich')


def mpi_launcher(name):
    """``'openmpi'``, ``'hydra'`` or None (unknown) for an MPI's name or alias."""
    for mpi in MPIS:
        if name == mpi.name or name in mpi.aliases:
            return mpi.launcher
    return None


#: Compiler names in environment names -> the compiler.
COMPILERS = {
    'gnu': 'gcc',
    'gcc': 'gcc',
    'intel': 'intel',
    'oneapi': 'oneapi',
    'clang': 'clang',
    'llvm': 'clang',
    'aocc': 'aocc',
    'nvhpc': 'nvhpc',
    'pgi': 'nvhpc',
    'cce': 'cce',
    'cray': 'cce',
    'fujitsu': 'fujitsu',
}

#: Compilers a check may be built with.
BUILT_COMPILERS = ('gcc',)

#: BLAS libraries as environment names call them.
BLAS = ('openblas', 'mkl', 'blis', 'aocl', 'libsci', 'essl', 'armpl', 'atlas')

#: Spack packages that provide BLAS.
SPACK_BLAS_PROVIDERS = (
    'openblas',
    'intel-oneapi-mkl',
    'amdblis',
    'blis',
    'netlib-lapack',
)

#: BLAS libraries a check may be built against.
BUILT_BLAS = ('openblas',)

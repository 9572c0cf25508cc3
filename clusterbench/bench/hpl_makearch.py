"""HPL 2.x's ``Make.<arch>``, written from a programming environment.

HPL builds with ``make arch=<arch>`` from a top directory holding
``Make.<arch>``; ``TOPdir`` is given on make's command line (it reaches every
sub-make), so the file does not depend on where the tree is staged. MPI comes
from the environment's compiler wrapper (no MPdir/MPlib), BLAS through its C
interface (``-DHPL_CALL_CBLAS``).
"""

from clusterbench.core.errors import ClusterbenchError

ARCH = 'clusterbench'

#: Link flags of each BLAS an environment may declare (``extras.blas``);
#: ``extras.blas_libs`` overrides them.
BLAS_LIBS = {
    'openblas': '-lopenblas',
    'blis': '-lblis',
    'mkl': '-lmkl_rt',
}

#: Compilers that take ``-march=native``.
NATIVE_FLAG = {
    'gcc': '-march=native',
    'clang': '-march=native',
    'aocc': '-march=native',
}

_TEMPLATE = """\
# Written by clusterbench for {origin}.
SHELL        = /bin/sh
CD           = cd
CP           = cp
LN_S         = ln -s
MKDIR        = mkdir
RM           = /bin/rm -f
TOUCH        = touch
ARCH         = {arch}
INCdir       = $(TOPdir)/include
BINdir       = $(TOPdir)/bin/$(ARCH)
LIBdir       = $(TOPdir)/lib/$(ARCH)
HPLlib       = $(LIBdir)/libhpl.a
MPdir        =
MPinc        =
MPlib        =
LAdir        =
LAinc        = {blas_inc}
LAlib        = {blas_libs}
F2CDEFS      =
HPL_INCLUDES = -I$(INCdir) -I$(INCdir)/$(ARCH) $(LAinc) $(MPinc)
HPL_LIBS     = $(HPLlib) $(LAlib) $(MPlib)
HPL_OPTS     = -DHPL_CALL_CBLAS
HPL_DEFS     = $(F2CDEFS) $(HPL_OPTS) $(HPL_INCLUDES)
CC           = {cc}
CCNOOPT      = $(HPL_DEFS)
CCFLAGS      = $(HPL_DEFS) {cflags}
LINKER       = {cc}
LINKFLAGS    = $(CCFLAGS)
ARCHIVER     = ar
ARFLAGS      = r
RANLIB       = echo
"""


def blas_libs(extras):
    """The BLAS link flags of an environment's extras (one line if unknown)."""
    if extras.get('blas_libs'):
        return extras['blas_libs']
    blas = extras.get('blas', 'openblas')
    if blas not in BLAS_LIBS:
        raise ClusterbenchError(
            f'BLAS {blas!r}: declare its link flags as extras.blas_libs '
            f'(known: {", ".join(BLAS_LIBS)})'
        )
    return BLAS_LIBS[blas]


def cflags(base, compiler, native):
    """*base* flags, plus the compiler's native-target flag when *native*."""
    flag = NATIVE_FLAG.get(compiler) if native else None
    return f'{base} {flag}' if flag else base


def make_arch(cc, flags, libs, blas_inc='', arch=ARCH, origin='an environment'):
    """The text of ``Make.<arch>``."""
    if not cc:
        raise ClusterbenchError(f'{origin}: no C compiler (cc) declared; HPL needs one')
    return _TEMPLATE.format(
        arch=arch,
        cc=cc,
        cflags=flags,
        blas_libs=libs,
        blas_inc=blas_inc,
        origin=origin,
    )

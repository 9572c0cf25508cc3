"""OpenBLAS's kernel choice against what the CPU offers.

OpenBLAS built for several CPUs (Debian's ``DYNAMIC_ARCH``) picks its kernels
by CPU model; a model it does not know gets a generic SSE-era kernel
(0.3.21 on Emerald Rapids, family 6 model 207: ``Prescott``), 3-5x slower
at DGEMM than the AVX-512 one. ``OPENBLAS_CORETYPE`` overrides the choice.
The ``local`` system sets it (:func:`local_setting`); a production site
fixes its BLAS instead, and the portable figures name the cause
(:func:`cause`).
"""

import os
import sys

from clusterbench.machine.factreader import last_line_of

VARIABLE = 'OPENBLAS_CORETYPE'

#: OpenBLAS cores without AVX: its fallbacks for a CPU it does not know
#: (Prescott on x86_64, Katmai... on 32-bit) and the pre-AVX generations.
#: A CPU with AVX2 running one of these leaves most of its peak unused.
GENERIC_CORES = frozenset(
    c.lower()
    for c in (
        'Katmai',
        'Coppermine',
        'Northwood',
        'Banias',
        'Prescott',
        'Core2',
        'Penryn',
        'Dunnington',
        'Nehalem',
        'Atom',
        'Opteron',
        'Barcelona',
        'Bobcat',
    )
)

#: (CPU flags that must all be present, the core to set), widest first.
#: SkylakeX needs AVX-512 F only (Cooperlake adds BF16; SkylakeX is safe).
TARGETS = (
    (('avx512f',), 'SkylakeX'),
    (('avx2', 'fma'), 'Haswell'),
)

_CORENAME = (
    'import ctypes, ctypes.util\n'
    "name = ctypes.util.find_library('openblas') or 'libopenblas.so.0'\n"
    'lib = ctypes.CDLL(name)\n'
    'lib.openblas_get_corename.restype = ctypes.c_char_p\n'
    'print(lib.openblas_get_corename().decode())\n'
)


def is_generic(core):
    return isinstance(core, str) and core.lower() in GENERIC_CORES


def cpu_flags(path='/proc/cpuinfo'):
    """The flags of the first CPU in *path* (empty if unreadable)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith('flags'):
                    return frozenset(line.split(':', 1)[1].split())
    except OSError:
        pass
    return frozenset()


def coretype_for(core, flags):
    """The OpenBLAS core to set when *core* is generic and *flags* offer
    more, else None."""
    if not is_generic(core):
        return None
    for needed, target in TARGETS:
        if all(flag in flags for flag in needed):
            return target
    return None


def openblas_core(timeout=20):
    """The core OpenBLAS picks here by itself, or None (no libopenblas, or a
    build without ``openblas_get_corename``). Asked in a child: loading
    OpenBLAS starts its threads, which the caller (ReFrame) must not keep."""
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    env['OPENBLAS_NUM_THREADS'] = '1'
    return last_line_of([sys.executable, '-c', _CORENAME], timeout, env)


def local_setting(environ=None, core=None, flags=None):
    """(core, coretype) when the ``local`` system should set
    ``OPENBLAS_CORETYPE=coretype``, else None. A user's own variable wins.
    *core* and *flags* default to this machine's."""
    environ = os.environ if environ is None else environ
    if environ.get(VARIABLE):
        return None
    flags = cpu_flags() if flags is None else flags
    if not any(all(f in flags for f in needed) for needed, _ in TARGETS):
        return None  # nothing better to offer: no need to ask OpenBLAS
    core = openblas_core() if core is None else core
    target = coretype_for(core, flags)
    return (core, target) if target else None


def note(core, coretype):
    """What the ``local`` system tells its user it did."""
    return (
        f'OpenBLAS core {core} is generic on this CPU: local sets {VARIABLE}={coretype}'
    )


def cause(core):
    """Why a DGEMM-bound figure failed, when *core* is generic; else ''."""
    if not is_generic(core):
        return ''
    return f'OpenBLAS chose its generic {core} kernel: set {VARIABLE}'

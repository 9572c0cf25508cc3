"""Which BLAS, UCX and libfabric libraries load here, and their versions,
asked of the libraries themselves through ctypes; prints one JSON object.

Run as a script, by file path, in a child interpreter (see
``softfacts.probe_libraries``): a library that misbehaves on load cannot take
the collector down, and nothing stays loaded in the caller. It imports only
the standard library, so the child needs no clusterbench on its path:

    python clusterbench/machine/libprobe.py
"""

import ctypes
import ctypes.util
import json
import os


def path_of(lib):
    """The real path of the loaded *lib*, from this process's memory map."""
    name = os.path.basename(lib)
    with open('/proc/self/maps') as maps:
        for line in maps:
            p = line.split()[-1]
            if p.startswith('/') and name.split('.so')[0] in os.path.basename(p):
                return os.path.realpath(p)
    return None


def load(*names):
    """(name, handle) of the first of *names* that loads, else (None, None)."""
    for n in names:
        found = ctypes.util.find_library(n)
        for cand in ([found] if found else []) + [f'lib{n}.so']:
            try:
                return cand, ctypes.CDLL(cand)
            except OSError:
                pass
    return None, None


def text(lib, symbol):
    f = getattr(lib, symbol)
    f.restype = ctypes.c_char_p
    return f().decode()


def openblas(name, lib):
    out = {'config': text(lib, 'openblas_get_config'), 'path': path_of(name)}
    try:  # older OpenBLAS builds lack it
        out['core'] = text(lib, 'openblas_get_corename')
    except AttributeError:
        pass
    return out


def ucx(name, lib):
    return {'version': text(lib, 'ucp_get_version_string'), 'path': path_of(name)}


def libfabric(name, lib):
    v = lib.fi_version()
    return {'version': f'{v >> 16}.{v & 65535}', 'path': path_of(name)}


#: library to load -> (key of the output, what to record of it).
LIBRARIES = (
    ('openblas', 'openblas', openblas),
    ('blas', 'blas', lambda name, lib: {'path': path_of(name)}),
    ('mkl_rt', 'mkl', lambda name, lib: {'path': path_of(name)}),
    ('ucp', 'ucx', ucx),
    ('fabric', 'libfabric', libfabric),
)


def probe():
    out = {}
    for lib_name, key, record in LIBRARIES:
        # A library that loads but lacks a symbol is one fact less, no more.
        try:
            name, lib = load(lib_name)
            if lib is not None:
                out[key] = record(name, lib)
        except Exception:  # noqa: BLE001 - foreign libraries raise anything
            pass
    return out


if __name__ == '__main__':
    print(json.dumps(probe()))

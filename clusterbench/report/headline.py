"""The numbers of the executive page: ratios of measured figures against the
node's ceilings, each a small function of plain numbers.

This is the one place the report computes them. They are the same ratios as
the portable figures (HPL against peak and against DGEMM, DGEMM against a
core's peak, point-to-point bandwidth against the link's): when those exist
as judged figures, these functions are where the report points at them,
instead of computing its own.

Every function returns None when an input is missing or not positive; a
missing figure is never a zero.
"""

import math


def _ok(*values):
    return all(v is not None and math.isfinite(v) and v > 0 for v in values)


def per_node(total, nodes):
    """A figure of the whole job (HPL's GFlop/s) per node."""
    return total / nodes if _ok(total, nodes) else None


def share(value, ceiling):
    """*value* as a fraction of *ceiling* (0.8 = 80 %)."""
    return value / ceiling if _ok(value, ceiling) else None


def hpl_over_dgemm(hpl_total, dgemm_per_process, ranks):
    """HPL against what its ranks' DGEMM could do together (HPCC's
    ``hpl_dgemm_efficiency``, as a fraction)."""
    if not _ok(hpl_total, dgemm_per_process, ranks):
        return None
    return hpl_total / (dgemm_per_process * ranks)


#: How a STREAM triad figure becomes a node's: the check's own definition
#: (SHORT: the same in a few words, for the table).
STREAM_NODE = 'stream.c triad, all cores of one node (OpenMP): per node as measured'
STREAM_STAR = (
    'HPCC StarSTREAM triad (per process): per node = per process x ranks on the node'
)
STREAM_SINGLE = 'HPCC SingleSTREAM triad (one process alone on the node): per node'
SHORT = {
    STREAM_NODE: 'stream.c, whole node',
    STREAM_STAR: 'HPCC star triad × ranks/node',
    STREAM_SINGLE: 'HPCC single triad, one process',
}


def stream_per_node(value, definition, ranks_per_node):
    """A node's triad bandwidth from a figure of *definition*."""
    if definition == STREAM_STAR:
        return value * ranks_per_node if _ok(value, ranks_per_node) else None
    return value if _ok(value) else None


def bytes_per_flop(stream_node_gbs, peak_node_gflops):
    """Memory bandwidth per unit of compute: the machine balance."""
    return share(stream_node_gbs, peak_node_gflops)


def geomean(values):
    """The geometric mean of the positive *values* (NPB's summary), or None."""
    values = [v for v in values if _ok(v)]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def ridge(peak_gflops, stream_gbs):
    """The arithmetic intensity (flop/byte) where the memory roof meets the peak."""
    return share(peak_gflops, stream_gbs)


def dgemm_intensity(order):
    """Flop per byte of a DGEMM (or HPL's update) of order N from memory:
    2N^3 flop over three N x N matrices of 8 bytes, N/12."""
    return order / 12.0 if _ok(order) else None


#: Flop per byte of DRAM traffic of the NPB kernels, as placed on the
#: roofline: nominal estimates of each kernel's dominant loop (CG: a sparse
#: matrix-vector product, about 2 flop per 12-byte matrix entry; MG: a
#: 27-point stencil; FT: a 3-D FFT; BT, SP, LU: block and scalar
#: pentadiagonal solvers). EP (random numbers) and IS (integer sort) count
#: no floating-point work and are not placed.
NPB_NOMINAL_INTENSITY = {
    'cg': 0.17,
    'mg': 0.5,
    'ft': 1.0,
    'bt': 1.5,
    'sp': 0.8,
    'lu': 1.2,
}

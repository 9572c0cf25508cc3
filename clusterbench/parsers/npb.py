"""NAS Parallel Benchmarks 3.x (MPI) output: the closing report and NPB's verdict.

Every NPB benchmark ends with the same report::

     CG Benchmark Completed.
     Class           =                        C
     Size            =                   150000
     ...
     Mop/s total     =                  2041.04
     Verification    =               SUCCESSFUL

NPB's own verification decides whether a run counts. On top of it, the
harness checks that the run is the one that was asked for (benchmark, class,
process count, no idle processes), that the problem is the documented one for
its class, and that the verification values NPB prints (CG's zeta, MG's norm,
EP's sums, FT's checksums, BT/SP/LU's norms) are the official ones of the
class (``clusterbench.bench.npb_rules.OFFICIAL_VALUES``): a binary built from
modified sources, or reporting another class, yields no figure.
"""

import re

from clusterbench.bench import npb_rules
from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.figures import HIGHER, LOWER, SOLVER, Figure

_COMPLETED = re.compile(r'^\s*(\w+) Benchmark Completed\.?\s*$', re.M)
_HEADER = re.compile(r'NAS Parallel Benchmarks ([\d.]+) -- (\w+) Benchmark')
_FIELD = re.compile(r'^\s*([A-Za-z/][A-Za-z/ ]*?)\s*=\s*(.*?)\s*$')
_NUMBER = r'[-+]?(?:\d+\.?\d*|\.\d+)(?:[EeDd][-+]?\d+)?'

# Report field -> (key, type). 3.3 names the active count "Compiled procs",
# 3.4's C code "Active procs", its Fortran "Active processes".
_FIELDS = {
    'Class': ('class', str),
    'Size': ('size', str),
    'Iterations': ('iterations', int),
    'Time in seconds': ('time', float),
    'Total processes': ('total_processes', int),
    'Active processes': ('active_processes', int),
    'Active procs': ('active_processes', int),
    'Compiled procs': ('active_processes', int),
    'Mop/s total': ('mops_total', float),
    'Mop/s/process': ('mops_per_process', float),
    'Operation type': ('operation_type', str),
    'Verification': ('verification', str),
    'Version': ('version', str),
}
_REQUIRED = (
    'class',
    'size',
    'iterations',
    'time',
    'total_processes',
    'mops_total',
    'mops_per_process',
    'verification',
)

# Printed values keep 13 significant digits: compare them to the official
# ones no tighter than this (NPB itself compares at full precision).
_PRINT_PRECISION = 1e-11
# NPB's own tolerances (verification-values.md).
_EPSILON = {'cg': 1e-10, 'ep': 1e-8, 'ft': 1e-12, 'mg': 1e-8}
_EPSILON_CFD = 1e-8


class NPBParseError(ClusterbenchError):
    """Not a complete, verified NPB output of the run that was asked for."""


def _number(text):
    return float(text.replace('D', 'E').replace('d', 'e'))


def parse(text, source='NPB output'):
    """The closing report of one NPB run as a dict.

    Keys: ``benchmark`` (lower case), ``class``, ``size`` (tuple of ints),
    ``iterations``, ``time``, ``total_processes``, ``active_processes``,
    ``mops_total``, ``mops_per_process``, ``verification``, ``version`` and,
    from the banner, ``banner_benchmark`` and ``banner_version``.
    """
    found = list(_COMPLETED.finditer(text))
    if not found:
        raise NPBParseError(
            f'{source}: no NPB closing report ("Benchmark Completed"): '
            f'run incomplete or killed?'
        )
    if len(found) > 1:
        raise NPBParseError(
            f'{source}: {len(found)} NPB closing reports, expected one '
            f'(launcher and MPI library mismatched?)'
        )
    result = {'benchmark': found[0].group(1).lower()}
    for line in text[found[0].end() :].splitlines()[1:]:
        if not line.strip() or 'Compile options' in line:
            break
        field = _FIELD.match(line)
        if not field or field.group(1) not in _FIELDS:
            continue
        key, kind = _FIELDS[field.group(1)]
        try:
            result[key] = kind(field.group(2))
        except ValueError:
            raise NPBParseError(
                f'{source}: {field.group(1)} is not a number: {field.group(2)!r}'
            ) from None
    missing = [key for key in _REQUIRED if key not in result]
    if missing:
        raise NPBParseError(
            f'{source}: closing report lacks {", ".join(missing)} (truncated?)'
        )
    result['size'] = tuple(int(n) for n in re.findall(r'\d+', result['size']))
    result.setdefault('active_processes', result['total_processes'])
    banner = _HEADER.search(text)
    if banner:
        result['banner_version'] = banner.group(1)
        result['banner_benchmark'] = banner.group(2).lower()
    return result


def verify(text, source='NPB output', benchmark=None, npb_class=None, nprocs=None):
    """Return the report of a verified run that is the one that was asked for.

    Raises :class:`NPBParseError` with the first reason the run does not
    count: NPB's verification did not succeed, the benchmark, class or
    process count differ from *benchmark*, *npb_class* and *nprocs*, some
    processes were idle, the problem is not the documented one for the
    class, or a printed verification value is not the official one.
    """
    result = parse(text, source)
    if result['verification'] != 'SUCCESSFUL':
        raise NPBParseError(f'{source}: NPB verification {result["verification"]}')
    name = result['benchmark']
    for seen in (name, result.get('banner_benchmark', name)):
        if benchmark is not None and seen != benchmark.lower():
            raise NPBParseError(
                f'{source}: benchmark {seen.upper()}, {benchmark.upper()} requested'
            )
    if npb_class is not None and result['class'] != npb_class:
        raise NPBParseError(
            f'{source}: class {result["class"]}, class {npb_class} requested'
        )
    total = result['total_processes']
    if nprocs is not None and total != nprocs:
        raise NPBParseError(f'{source}: ran on {total} processes, {nprocs} requested')
    if result['active_processes'] != total:
        raise NPBParseError(
            f'{source}: only {result["active_processes"]} of {total} processes '
            f'were active'
        )
    for problem in official_mismatches(text, result):
        raise NPBParseError(f'{source}: {problem}')
    return result


def official_mismatches(text, result):
    """How the run differs from NPB's documented problem and official values.

    An empty list for a run of the documented problem whose printed
    verification values are the official ones of its class. A class with no
    documented problem (NPB's internal class "U") is a mismatch.
    """
    bench, cls = result['benchmark'], result['class']
    if npb_rules.class_problem(bench, cls):
        return [npb_rules.class_problem(bench, cls)]
    documented = npb_rules.problem(bench, cls)
    out = []
    if result['size'] != documented['size']:
        out.append(
            f'size {_size(result["size"])} is not that of class {cls} '
            f'({_size(documented["size"])})'
        )
    if result['iterations'] != documented['iterations']:
        out.append(
            f'{result["iterations"]} iterations, class {cls} has '
            f'{documented["iterations"]}'
        )
    official = npb_rules.OFFICIAL_VALUES.get(bench, {}).get(cls)
    if official:
        out += _VALUE_CHECKS[bench](text, official, cls, _version(result))
    return out


def _version(result):
    """NPB's version as a tuple; ``None`` when it does not read as one."""
    for text in (result.get('version'), result.get('banner_version')):
        if text and re.fullmatch(r'\d+(?:\.\d+)*', text):
            return tuple(int(n) for n in text.split('.'))
    return None


def _size(size):
    return 'x'.join(str(n) for n in size)


def _close(value, reference, eps):
    tol = max(eps, _PRINT_PRECISION)
    return abs(value - reference) <= tol * abs(reference)


def _mismatch(what, value, reference, cls):
    return f'{what} {value!r} is not the official value {reference!r} of class {cls}'


def _one(pattern, text, count=1):
    found = re.search(pattern, text, re.M)
    if not found:
        return None
    return [_number(found.group(i)) for i in range(1, count + 1)]


def _single_value(label, pattern, key, bench):
    """A check of one printed value (CG's zeta, MG's L2 norm)."""

    def check(text, official, cls, version):
        found = _one(rf'^\s*{pattern}\s+({_NUMBER})', text)
        if found is None or _close(found[0], official[key], _EPSILON[bench]):
            return []
        return [_mismatch(label, found[0], official[key], cls)]

    return check


def _check_ep(text, official, cls, version):
    sums = _one(rf'^\s*Sums =\s+({_NUMBER})\s+({_NUMBER})', text, 2)
    pairs = _one(rf'^\s*No\. Gaussian Pairs =\s+({_NUMBER})', text)
    printed = []
    # EP's sums are defined as they are since 3.4.2 (3.3 and 3.4.0 print
    # other ones); the number of Gaussian pairs has not changed.
    if sums is not None and (version is None or version >= (3, 4, 2)):
        printed += [
            ('sum x', sums[0], official['sx']),
            ('sum y', sums[1], official['sy']),
        ]
    if pairs is not None:
        printed.append(('Gaussian pairs', pairs[0], official['gc']))
    out = []
    for what, value, ref in printed:
        if not _close(value, ref, _EPSILON['ep']):
            out.append(_mismatch(what, value, ref, cls))
    return out


def _check_ft(text, official, cls, version):
    rows = re.findall(
        rf'^\s*T =\s*(\d+)\s+Checksum =\s+({_NUMBER})\s+({_NUMBER})', text, re.M
    )
    if not rows:
        return []
    last = {int(i): (_number(re_), _number(im)) for i, re_, im in rows}
    got = last.get(official['iteration'])
    if got is None:
        return [f'no checksum of iteration {official["iteration"]}']
    ref = official['checksum']
    err = abs(complex(*got) - complex(*ref)) / abs(complex(*ref))
    if err > max(_EPSILON['ft'], _PRINT_PRECISION):
        return [_mismatch(f'checksum {official["iteration"]}', got, ref, cls)]
    return []


_ROW = re.compile(rf'^\s*(\d)\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s*$')


def _comparison_rows(text, title):
    """(computed, reference) pairs of one 'Comparison of ...' table."""
    start = text.find(title)
    if start < 0:
        return []
    rows = []
    for line in text[start:].splitlines()[1:]:
        row = _ROW.match(line)
        if not row:
            break
        rows.append((_number(row.group(2)), _number(row.group(3))))
    return rows


def _check_cfd(text, official, cls, version):
    out = []
    for title, key in (
        ('Comparison of RMS-norms of residual', 'residual'),
        ('Comparison of RMS-norms of solution error', 'error'),
    ):
        if title not in text:
            continue
        rows = _comparison_rows(text, title)
        if len(rows) != len(official[key]):
            out.append(f'no complete "{title}" table')
            continue
        for i, ((computed, printed_ref), ref) in enumerate(zip(rows, official[key]), 1):
            if not _close(printed_ref, ref, _PRINT_PRECISION):
                out.append(_mismatch(f'{key} reference {i}', printed_ref, ref, cls))
            elif not _close(computed, ref, _EPSILON_CFD):
                out.append(_mismatch(f'{key} {i}', computed, ref, cls))
    if 'surface' in official and 'Comparison of surface integral' in text:
        found = _one(
            rf'Comparison of surface integral\s*\n\s*({_NUMBER})\s+({_NUMBER})', text, 2
        )
        if found is None:
            out.append('no complete "Comparison of surface integral"')
        elif not _close(found[0], official['surface'], _EPSILON_CFD):
            out.append(
                _mismatch('surface integral', found[0], official['surface'], cls)
            )
    step = _one(rf'^\s*Iterations:\s+\d+\s+dt:\s+({_NUMBER})', text)
    if step is not None and not _close(step[0], official['dt'], 1e-6):
        out.append(_mismatch('time step', step[0], official['dt'], cls))
    return out


_VALUE_CHECKS = {
    'cg': _single_value('zeta', 'Zeta is', 'zeta', 'cg'),
    'mg': _single_value('L2 norm', 'L2 Norm is', 'rnm2', 'mg'),
    'ep': _check_ep,
    'ft': _check_ft,
    'bt': _check_cfd,
    'sp': _check_cfd,
    'lu': _check_cfd,
}

# Figures the harness records: report key -> (declaration, scale).
FIGURES = {
    'mops_total': (
        Figure('mops_total', 'Mop/s', HIGHER, headline='NPB', kind=SOLVER),
        1.0,
    ),
    'mops_per_process': (
        Figure('mops_per_process', 'Mop/s', HIGHER, kind=SOLVER),
        1.0,
    ),
    'time': (Figure('time', 's', LOWER, kind=SOLVER), 1.0),
}
DECLARED = tuple(figure for figure, _ in FIGURES.values())


def figures(result, source='NPB output'):
    """The recorded figures of a verified report: name -> (value, unit).

    (*source*: the signature of every parser; a verified report has them all.)
    """
    return {
        figure.name: (float(result[key]) * scale, figure.unit)
        for key, (figure, scale) in FIGURES.items()
    }

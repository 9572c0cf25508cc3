"""MPI profiles written by src/mpiprof: reading, summaries, cross-checks, text.

A profile is one JSON file per job (format ``clusterbench-mpiprof/1``) with,
per intercepted MPI function, calls / time / bytes aggregated over the ranks
(min, mean, max, sum) and a log2 message-size histogram; bin 0 holds 0-byte
messages and bin k >= 1 sizes in [2^(k-1), 2^k) bytes.

Shown by ``clusterbench profile FILE``; from a shell without the entry point:

    python -m clusterbench.cli.profile show mpiprof.json
    python -m clusterbench.cli.profile check mpiprof.json cgsolver.out
"""

import json

from clusterbench.core import inputfile
from clusterbench.core.errors import ClusterbenchError

FORMAT = 'clusterbench-mpiprof/1'
_STATS = ('min', 'mean', 'max', 'sum')


class ProfileError(ClusterbenchError):
    """Not a readable, well-formed mpiprof profile."""


def load(path):
    """The profile at *path*, validated; one-line errors name the file."""
    try:
        # Regular files only: a FIFO would hang the command.
        data = json.loads(inputfile.read_text(path))
    except OSError as err:
        raise ProfileError(f'{path}: cannot read profile: {err.strerror}') from None
    except json.JSONDecodeError as err:
        raise ProfileError(f'{path}:{err.lineno}: not JSON: {err.msg}') from None
    except UnicodeDecodeError as err:
        raise ProfileError(f'{path}: not text: {err.reason}') from None
    return validate(data, path)


def validate(data, source='profile'):
    if not isinstance(data, dict) or data.get('format') != FORMAT:
        found = data.get('format') if isinstance(data, dict) else type(data).__name__
        raise ProfileError(f'{source}: not an mpiprof profile (format {found!r})')
    nranks = data.get('nranks')
    if not isinstance(nranks, int) or nranks < 1:
        raise ProfileError(f'{source}: nranks={nranks!r}, expected a positive count')
    for key in ('wall', 'mpi'):
        _stat(data.get('time', {}).get(key), f'{source}: time.{key}')
    funcs = data.get('functions')
    if not isinstance(funcs, dict):
        raise ProfileError(f'{source}: no "functions" table')
    for name, entry in funcs.items():
        where = f'{source}: {name}'
        if not isinstance(entry, dict):
            raise ProfileError(f'{where}: not an object')
        _stat(entry.get('calls'), f'{where}.calls')
        _stat(entry.get('time'), f'{where}.time')
        if 'bytes' in entry:
            _stat(entry['bytes'], f'{where}.bytes')
        hist = entry.get('histogram', [])
        if not isinstance(hist, list) or not all(isinstance(n, int) for n in hist):
            raise ProfileError(f'{where}.histogram: not a list of counts')
    return data


def _stat(value, where):
    if not isinstance(value, dict) or not all(
        isinstance(value.get(k), (int, float)) and not isinstance(value.get(k), bool)
        for k in _STATS
    ):
        raise ProfileError(f'{where}: expected numbers {", ".join(_STATS)}')


def mpi_time_share(profile):
    """MPI time over wall time, summed over the ranks (0..1)."""
    wall = profile['time']['wall']['sum']
    return profile['time']['mpi']['sum'] / wall if wall > 0 else 0.0


def breakdown(profile):
    """Per-function rows, most time first.

    Each row: name, category, calls (sum over ranks), time per rank (mean
    and max, s), share of MPI time, bytes (sum) and mean message size.
    """
    mpi_total = profile['time']['mpi']['sum']
    rows = []
    for name, entry in profile['functions'].items():
        calls = entry['calls']['sum']
        nbytes = entry['bytes']['sum'] if 'bytes' in entry else None
        rows.append(
            {
                'function': name,
                'category': entry.get('category', ''),
                'calls': calls,
                'time_mean_s': entry['time']['mean'],
                'time_max_s': entry['time']['max'],
                'share_of_mpi': entry['time']['sum'] / mpi_total if mpi_total else 0.0,
                'bytes': nbytes,
                'mean_size': nbytes / calls if nbytes is not None and calls else None,
            }
        )
    rows.sort(key=lambda r: (-r['time_mean_s'], r['function']))
    return rows


def category_histograms(profile):
    """{'p2p': [...], 'collective': [...]}: message counts per log2 bin."""
    hists = profile.get('histograms') or {}
    return {k: list(hists.get(k) or []) for k in ('p2p', 'collective')}


def summary(profile):
    """A compact, JSON-able digest (kept in the run report with the figures)."""
    time = profile['time']
    return {
        'nranks': profile['nranks'],
        'mpi_library': profile.get('mpi_library'),
        'mpi_time_share': round(mpi_time_share(profile), 6),
        'wall_s': {k: time['wall'][k] for k in ('min', 'mean', 'max')},
        'mpi_s': {k: time['mpi'][k] for k in ('min', 'mean', 'max')},
        'share': {k: time.get('share', {}).get(k) for k in ('min', 'mean', 'max')},
        'functions': {
            r['function']: {
                'calls': r['calls'],
                'time_mean_s': r['time_mean_s'],
                'time_max_s': r['time_max_s'],
                **({'bytes': r['bytes']} if r['bytes'] is not None else {}),
            }
            for r in breakdown(profile)
        },
        'histograms': category_histograms(profile),
    }


# The solver's counters (summed over ranks) and the profile's view of them.
CGSOLVER_COUNTERS = {
    'isend': (('MPI_Isend',), 'calls'),
    'irecv': (('MPI_Irecv',), 'calls'),
    'allreduce': (('MPI_Allreduce',), 'calls'),
    'iallreduce': (('MPI_Iallreduce',), 'calls'),
    'bytes_sent': (('MPI_Isend',), 'bytes'),
    'allreduce_bytes': (('MPI_Allreduce', 'MPI_Iallreduce'), 'bytes'),
}


def cross_check(profile, cgsolver_result):
    """Compare cgsolver's own ``mpi_counts`` with the profile.

    Returns rows (counter, solver's value, profile's value, agree?) for every
    counter of :data:`CGSOLVER_COUNTERS`.
    """
    counts = cgsolver_result.get('mpi_counts')
    if not isinstance(counts, dict):
        raise ProfileError('cgsolver result has no "mpi_counts"')
    rows = []
    for counter, (functions, what) in CGSOLVER_COUNTERS.items():
        if counter not in counts:
            raise ProfileError(f'cgsolver mpi_counts has no {counter!r}')
        seen = sum(
            profile['functions'][f][what]['sum']
            for f in functions
            if f in profile['functions'] and what in profile['functions'][f]
        )
        rows.append((counter, counts[counter], seen, counts[counter] == seen))
    return rows


def bin_label(k):
    """The sizes of histogram bin *k*: '0 B', '1 B', '[2 B, 4 B)', '[1 KiB, 2 KiB)'."""
    if k <= 1:
        return f'{k} B'
    return f'[{_size(2 ** (k - 1))}, {_size(2**k)})'


def _size(n):
    for unit, scale in (
        ('EiB', 2**60),
        ('PiB', 2**50),
        ('TiB', 2**40),
        ('GiB', 2**30),
        ('MiB', 2**20),
        ('KiB', 2**10),
    ):
        if n >= scale:
            return f'{n // scale} {unit}'
    return f'{n} B'


def format_histogram(hist, width=40, indent='    '):
    lines = []
    top = max(hist, default=0)
    for k, n in enumerate(hist):
        if not n:
            continue
        bar = '#' * max(1, round(width * n / top))
        lines.append(f'{indent}{bin_label(k):>18}  {n:>10}  {bar}')
    return lines or [f'{indent}(no messages)']


def _si(n):
    if n is None:
        return '-'
    for unit, scale in (('G', 1e9), ('M', 1e6), ('k', 1e3)):
        if abs(n) >= scale:
            return f'{n / scale:.3g}{unit}'
    return f'{n:.3g}' if isinstance(n, float) else str(n)


def format_summary(digest, indent='  '):
    """Text of a :func:`summary`: MPI share, per-call breakdown, histograms."""
    share = digest['share']
    lines = [
        f'{indent}MPI time {100 * digest["mpi_time_share"]:.1f}% of wall time '
        f'over {digest["nranks"]} ranks'
        + (
            f' (per rank {100 * share["min"]:.1f}% .. {100 * share["max"]:.1f}%)'
            if share.get('min') is not None
            else ''
        ),
        f'{indent}{"function":<26}{"calls":>10}{"s/rank":>11}{"max s":>10}'
        f'{"% MPI":>8}{"bytes":>9}{"avg B":>9}',
    ]
    mpi_mean = digest['mpi_s']['mean'] or 0.0
    for name, f in digest['functions'].items():
        pct = 100 * f['time_mean_s'] / mpi_mean if mpi_mean else 0.0
        nbytes = f.get('bytes')
        avg = nbytes / f['calls'] if nbytes is not None and f['calls'] else None
        lines.append(
            f'{indent}{name:<26}{f["calls"]:>10}{f["time_mean_s"]:>11.4g}'
            f'{f["time_max_s"]:>10.4g}{pct:>8.1f}{_si(nbytes):>9}{_si(avg):>9}'
        )
    for kind, hist in digest['histograms'].items():
        lines.append(f'{indent}message sizes, {kind} (messages over all ranks):')
        lines += format_histogram(hist, indent=indent + '  ')
    return lines


def format_profile(profile):
    head = [
        f'{profile.get("command") or "?"}',
        f'  {profile.get("mpi_library") or "MPI ?"}; {profile["nranks"]} ranks on '
        f'{profile.get("nodes", "?")} node(s)',
    ]
    return '\n'.join(head + format_summary(summary(profile)))

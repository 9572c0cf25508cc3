"""Check an mpiprof profile of prog_c / prog_f (2 ranks) against the calls they make.

check_profile.py PROFILE --interface c|fortran
check_profile.py PROFILE --count-only     (print what was caught; never fails)
"""

import argparse
import json
import sys

# Summed over the 2 ranks: function -> (calls, bytes, {histogram bin: count}).
# Bin k >= 1 holds sizes in [2^(k-1), 2^k).
EXPECTED = {
    'MPI_Barrier': (2, 0, {0: 2}),
    'MPI_Send': (6, 2 * (8 + 1024 + 65536), {4: 2, 11: 2, 17: 2}),
    'MPI_Recv': (6, 2 * (8 + 1024 + 65536), {4: 2, 11: 2, 17: 2}),
    'MPI_Irecv': (10, 4000, {9: 10}),
    'MPI_Isend': (10, 4000, {9: 10}),
    'MPI_Waitall': (10, None, None),
    'MPI_Allreduce': (14, 112, {4: 14}),
    'MPI_Bcast': (4, 160, {6: 4}),
    'MPI_Reduce': (6, 192, {6: 6}),
    'MPI_Alltoall': (2, 16, {4: 2}),
    'MPI_Sendrecv': (4, 64, {5: 4}),
    'MPI_Comm_split': (2, None, None),
    'MPI_Comm_free': (2, None, None),
    'MPI_Gather': (2, 8, {3: 2}),
}
TOTAL_CALLS = sum(calls for calls, _, _ in EXPECTED.values())


def problems(prof, interface):
    found = []
    funcs = prof.get('functions', {})
    if prof.get('nranks') != 2:
        found.append(f'nranks={prof.get("nranks")}, expected 2')
    for name in sorted(set(funcs) | set(EXPECTED)):
        if name not in EXPECTED:
            found.append(f'{name}: not called by the program, yet profiled')
            continue
        calls, nbytes, hist = EXPECTED[name]
        got = funcs.get(name)
        if got is None:
            found.append(f'{name}: missing from the profile')
            continue
        if got['calls']['sum'] != calls:
            found.append(f'{name}: {got["calls"]["sum"]} calls, expected {calls}')
        if got['calls']['min'] != calls // 2 or got['calls']['max'] != calls // 2:
            found.append(
                f'{name}: calls per rank {got["calls"]}, expected {calls // 2}'
            )
        if nbytes is not None and got['bytes']['sum'] != nbytes:
            found.append(f'{name}: {got["bytes"]["sum"]} bytes, expected {nbytes}')
        if hist is not None:
            bins = {i: n for i, n in enumerate(got['histogram']) if n}
            if bins != hist:
                found.append(f'{name}: histogram {bins}, expected {hist}')
    fortran = prof['fortran_calls']['sum']
    want = TOTAL_CALLS if interface == 'fortran' else 0
    if fortran != want:
        found.append(f'{fortran} calls through Fortran bindings, expected {want}')
    share = prof.get('mpi_time_share')
    if not isinstance(share, (int, float)) or not 0 < share <= 1:
        found.append(f'mpi_time_share={share!r}, expected in (0, 1]')
    for rank in prof.get('ranks', []):
        if not 0 < rank['mpi'] <= rank['wall']:
            found.append(
                f'rank {rank["rank"]}: mpi {rank["mpi"]} s, wall {rank["wall"]} s'
            )
    p2p = sum(prof['histograms']['p2p'])
    want_p2p = sum(
        EXPECTED[n][0]
        for n in EXPECTED
        if n in ('MPI_Send', 'MPI_Recv', 'MPI_Isend', 'MPI_Irecv', 'MPI_Sendrecv')
    )
    if p2p != want_p2p:
        found.append(f'p2p histogram holds {p2p} messages, expected {want_p2p}')
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('profile')
    ap.add_argument('--interface', choices=('c', 'fortran'))
    ap.add_argument('--count-only', action='store_true')
    args = ap.parse_args()
    try:
        with open(args.profile) as f:
            prof = json.load(f)
    except (OSError, ValueError) as err:
        print(f'{args.profile}: cannot read profile: {err}')
        return 1
    if args.count_only:
        caught = sum(f['calls']['sum'] for f in prof.get('functions', {}).values())
        print(f'{caught} of {TOTAL_CALLS} calls caught')
        return 0
    found = problems(prof, args.interface)
    for line in found:
        print(f'  {line}')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())

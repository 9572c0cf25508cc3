"""A short probe of the host's state, run before each benchmark launch.

A VM shares its host's memory system with neighbours it cannot see: a
session can land on a host whose memory is slower for minutes or hours
(2026-11-24: CG 1-rank -17 %, MPIFFT -14 %, RandomAccess -17 % in one
session with steal 0 % and the ranks at 100 % of their CPUs). The CPU
counters of the run's conditions cannot see that; a fixed, tiny workload
measured beside every job can. Three figures, each the best of ``REPEATS``
timings, on one core:

* ``dgemm_gflops``: a ``DGEMM_N``-square matrix product (core and its caches);
* ``gather_mups``: million random 8-byte reads per second from an array
  larger than any last-level cache (memory latency under parallel misses,
  what CG, FFT and RandomAccess feel);
* ``copy_gbs``: a copy between two such arrays, bytes read plus written
  (memory bandwidth; recorded, not judged: see :data:`JUDGED`);

One core cannot see a neighbour that takes what the test's other cores use:
in the ``make run`` of issue 40 HPCC's StarSTREAM (both cores streaming)
read -35 to -42 % while the one-core copy read 26.5 GB/s against 26.2 in
its references' sessions. So the probe also measures, at the test's
parallelism (``cores``: one pinned process on each of the first CPUs of the
job's affinity, as many as its ranks x their CPUs, all at once), the
resources the test's figures depend on (:data:`AT_PARALLELISM`, chosen by
the check from its figures' declarations):

* ``mem_gbs``: memory bandwidth, every core reading its own slice, twice
  the last-level cache, of one array, summed (bytes read per second);
* ``dgemm_all_gflops``: the DGEMM on every core at once, summed (the session
  of 2026-11-24 19:51 ran HPCC's star DGEMM on both cores -9 % while the
  one-core probe read as ever);
* ``shm_copy_gbs``: a 1 MiB message copied through shared memory from one
  of the test's cores to another, as a message between two ranks is.

Each is judged (:func:`drift_at_parallelism`) against the same figure at the
same ``cores`` in the references' sessions. It runs in its own process with
one BLAS thread, so that the job's environment is untouched, and costs
~0.1-0.2 s, most of it Python and numpy starting. The run's conditions take
the better of a probe before and one after the launch (:func:`best`).
``python -m clusterbench.noisyhost.hostprobe [--cores N] [--resources
memory,compute,link]`` prints the figures as JSON.
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time

from clusterbench.core.disturbance import Disturbance, Kind

DGEMM_N = 512
#: 64 MiB: twice the 32 MiB L3 of the project's machines; the probe is a
#: comparison with itself, not STREAM (whose 4x-LLC rule the StreamCheck
#: follows). The bandwidth at the test's parallelism reads at least twice
#: the last-level cache (:func:`_array_doubles`).
ARRAY_DOUBLES = 8 * 1024 * 1024
#: A quarter of the million random reads of the first probes: the same rate
#: (the reads are independent), a quarter of the time.
GATHERS = 256 * 1024
REPEATS = 5
#: A message between two ranks: NetPIPE's and HPCC's largest are ~1 MiB.
MESSAGE_BYTES = 1024 * 1024
MESSAGES = 16
#: What a test's figures can depend on (the check says which,
#: checks.plugins.runconditions.resources_of), and the figure of each at the
#: test's parallelism.
MEMORY, COMPUTE, LINK = 'memory', 'compute', 'link'
AT_PARALLELISM = {
    MEMORY: 'mem_gbs',
    COMPUTE: 'dgemm_all_gflops',
    LINK: 'shm_copy_gbs',
}
RESOURCES = tuple(AT_PARALLELISM)
#: The kind of disturbance a drift of each is.
NAMES = {
    MEMORY: Kind.HOST_MEMORY_BANDWIDTH,
    COMPUTE: Kind.HOST_DGEMM,
    LINK: Kind.HOST_SHARED_MEMORY_COPY,
}
FIGURES = ('dgemm_gflops', 'gather_mups', 'copy_gbs', *AT_PARALLELISM.values())
#: Without these the probe is absent; a figure at the test's parallelism may
#: be missing alone (a worker that died), the rest still counts.
REQUIRED = FIGURES[:3]
#: The one-core figures that judge a host. The copy bandwidth is kept, not
#: judged: like STREAM on these VMs it moved 21-37 GB/s between probes
#: seconds apart on an idle machine (2026-11-24), while DGEMM held to ~3 %
#: and the gather to ~6 % (best of 7 timings, 15 probes).
JUDGED = ('dgemm_gflops', 'gather_mups')
TIMEOUT_S = 30


def _best_seconds(work, repeats=REPEATS):
    # The best of a few: a neighbour's burst lengthens one timing, while a
    # slower host state lengthens them all.
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    return best


def _array_doubles(cores):
    """Doubles of the array the bandwidth is read from: twice the last-level
    cache (at least :data:`ARRAY_DOUBLES`) a core. A slice per core of half
    that read ~70 GB/s on two Zen 4 vCPUs, against ~40 from memory: each
    vCPU may sit on a core complex of its own, with its own L3."""
    llc = 0
    path = '/sys/devices/system/cpu/cpu0/cache'
    try:
        for index in os.listdir(path):
            with open(os.path.join(path, index, 'size')) as f:
                text = f.read().strip()
            scale = {'K': 1024, 'M': 1024**2, 'G': 1024**3}.get(text[-1:], 1)
            llc = max(llc, int(text.rstrip('KMG')) * scale)
    except (OSError, ValueError):
        pass
    return max(ARRAY_DOUBLES, 2 * llc // 8) * cores


def measure(source=None):
    """The one-core figures, measured in this process; *source*: the array
    to read (made here when None)."""
    import numpy as np

    rng = np.random.default_rng(12345)
    a = rng.random((DGEMM_N, DGEMM_N))
    b = rng.random((DGEMM_N, DGEMM_N))
    a @ b  # warm-up: BLAS loaded, pages touched
    dgemm = _best_seconds(lambda: a @ b)
    # The first probes' 64 MiB, whatever the bandwidth reads: the same figures.
    if source is None:
        source = np.arange(ARRAY_DOUBLES, dtype=np.float64)
    source = source[:ARRAY_DOUBLES]
    index = rng.integers(0, source.size, GATHERS)
    gather = _best_seconds(lambda: source.take(index))
    # Between the array's halves: no second array's pages to touch first
    # (on these VMs touching 64 MiB took 150 ms, the copy 8).
    half = source.size // 2
    copy = _best_seconds(lambda: np.copyto(source[half:], source[:half]))
    return {
        'dgemm_gflops': round(2 * DGEMM_N**3 / dgemm / 1e9, 2),
        'gather_mups': round(GATHERS / gather / 1e6, 1),
        'copy_gbs': round(2 * half * 8 / copy / 1e9, 2),
    }


def _cpus(cores):
    """The CPUs the test's ranks use: the first *cores* of the affinity."""
    return sorted(os.sched_getaffinity(0))[: max(1, cores)]


def _together(cpus, prepare, amount):
    """The summed rate of *prepare(k)*'s work, run by one thread pinned to
    each of *cpus* at once (a barrier before each timing), best of
    :data:`REPEATS`; None if a thread failed or never met the others.
    *amount*: what one work does (bytes, flops). Threads, not processes:
    numpy's BLAS and copies run without the interpreter's lock, and a thread
    costs no fork (50 ms of the first probes' 0.5 s)."""
    barrier = threading.Barrier(len(cpus), timeout=TIMEOUT_S / 3)
    timings = [None] * len(cpus)

    def worker(k, cpu):
        try:
            os.sched_setaffinity(0, {cpu})  # this thread only
            work = prepare(k)
            work()  # warm-up: caches, pages, the BLAS
            took = []
            for _ in range(REPEATS):
                # Together: the point is the cores' capacity while all work.
                barrier.wait()
                start = time.perf_counter()
                work()
                took.append(time.perf_counter() - start)
            timings[k] = took
        except (OSError, threading.BrokenBarrierError):
            barrier.abort()

    threads = [
        threading.Thread(target=worker, args=(k, cpu), daemon=True)
        for k, cpu in enumerate(cpus)
    ]
    for each in threads:
        each.start()
    for each in threads:
        each.join(TIMEOUT_S / 3)
    if not all(timings):
        return None
    return max(sum(amount / t[i] for t in timings) for i in range(REPEATS))


def measure_memory(cpus, source):
    """GB/s read from memory by every one of *cpus* at once, each its slice
    of *source* (summed)."""
    slices = len(cpus)
    size = source.size // slices

    def prepare(k):
        part = source[k * size : (k + 1) * size]
        return lambda: part.dot(part)

    rate = _together(cpus, prepare, size * 8)
    return None if rate is None else round(rate / 1e9, 2)


def measure_all_cores(cpus):
    """GF/s of the DGEMM on every one of *cpus* at once (summed)."""

    def prepare(k):
        import numpy as np

        rng = np.random.default_rng(k)
        a = rng.random((DGEMM_N, DGEMM_N))
        b = rng.random((DGEMM_N, DGEMM_N))
        return lambda: a @ b

    rate = _together(cpus, prepare, 2 * DGEMM_N**3)
    return None if rate is None else round(rate / 1e9, 2)


def measure_link(cpus):
    """GB/s of a message copied into a buffer on one CPU and out of it on
    another (one way, :data:`MESSAGES` in a row, best of :data:`REPEATS`),
    as a message between two ranks on one node goes through shared memory;
    None with fewer than two CPUs or a thread lost."""
    import numpy as np

    if len(cpus) < 2:
        return None
    shared = np.zeros(MESSAGE_BYTES, dtype=np.uint8)
    sent, received = queue.SimpleQueue(), queue.SimpleQueue()

    def receiver():
        os.sched_setaffinity(0, {cpus[1]})
        inbox = np.empty_like(shared)
        while sent.get(timeout=TIMEOUT_S / 3):
            np.copyto(inbox, shared)
            received.put(True)

    thread = threading.Thread(target=receiver, daemon=True)
    thread.start()
    os.sched_setaffinity(0, {cpus[0]})
    message = np.ones(MESSAGE_BYTES, dtype=np.uint8)

    def send():
        for _ in range(MESSAGES):
            np.copyto(shared, message)
            sent.put(True)
            received.get(timeout=TIMEOUT_S / 3)

    try:
        send()  # warm-up
        seconds = _best_seconds(send)
    except queue.Empty:
        seconds = None
    sent.put(False)
    thread.join(1)
    return round(MESSAGE_BYTES * MESSAGES / seconds / 1e9, 2) if seconds else None


def measure_at(cores, resources):
    """All the probe's figures: the one-core ones, and each of *resources*
    at *cores* cores (``cores`` records how many were used)."""
    import numpy as np

    cpus = _cpus(cores)
    source = np.arange(_array_doubles(len(cpus)), dtype=np.float64)
    found = measure(source)
    measured = {
        MEMORY: lambda: measure_memory(cpus, source),
        COMPUTE: lambda: measure_all_cores(cpus),
        LINK: lambda: measure_link(cpus),
    }
    for resource in RESOURCES:
        value = measured[resource]() if resource in resources else None
        if value is not None:
            found[AT_PARALLELISM[resource]] = value
    found['cores'] = len(cpus)
    return found


#: One core: the BLAS reads these when it loads.
ONE_THREAD = {
    'OPENBLAS_NUM_THREADS': '1',
    'OMP_NUM_THREADS': '1',
    'MKL_NUM_THREADS': '1',
}


def probe(python=sys.executable, cores=1, resources=RESOURCES):
    """The figures measured by a child process with one BLAS thread, or
    ``{'absent': reason}``; *resources* measured at *cores* cores."""
    env = {**os.environ, **ONE_THREAD}
    env.pop('LD_PRELOAD', None)
    wanted = ['--cores', str(cores), '--resources', ','.join(resources)]
    try:
        done = subprocess.run(
            [python, '-m', 'clusterbench.noisyhost.hostprobe', *wanted],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return {'absent': f'host probe: {err}'}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ['no output'])[-1]
        return {'absent': f'host probe exited {done.returncode}: {last}'}
    try:
        found = json.loads(done.stdout)
    except ValueError:
        return {'absent': 'host probe: no JSON on its output'}
    if not all(isinstance(found.get(k), (int, float)) for k in REQUIRED):
        return {'absent': 'host probe: figures missing from its output'}
    kept = [*FIGURES, 'cores']
    return {k: found[k] for k in kept if isinstance(found.get(k), (int, float))}


def best(probes):
    """Per figure the best of several probes; ``{'absent': reason}`` when
    none measured."""
    measured = [p for p in probes if 'absent' not in p]
    if not measured:
        return {'absent': probes[0]['absent'] if probes else 'host probe: not run'}
    return {
        k: max(p[k] for p in measured if k in p)
        for k in (*FIGURES, 'cores')
        if any(k in p for p in measured)
    }


def drift(probe_now, reference, limit):
    """The probe figures worse than *reference* by more than *limit* (a
    fraction), each a HOST_PROBE disturbance ('gather -18 %, copy -12 %').
    *reference* maps figure to the median of the sessions the references
    were made from."""
    found = []
    for key in JUDGED:
        now, then = probe_now.get(key), (reference or {}).get(key)
        if not isinstance(now, (int, float)) or not isinstance(then, (int, float)):
            continue
        if then > 0 and now < then * (1 - limit):
            figure = key.split('_')[0]
            found.append(Disturbance(Kind.HOST_PROBE, now / then, limit, figure=figure))
    return tuple(found)


def drift_at_parallelism(probe_now, reference, limit):
    """Each figure at the test's parallelism worse than *reference* by more
    than *limit*, a disturbance of its kind (:data:`NAMES`) with its cores
    ("host memory bandwidth -36 % against its references' sessions (2 cores
    streaming)"). A reference probe at other ``cores`` judges nothing."""
    reference = reference or {}
    cores = probe_now.get('cores')
    if reference.get('cores') != cores:
        return ()
    found = []
    for resource, key in AT_PARALLELISM.items():
        now, then = probe_now.get(key), reference.get(key)
        if not isinstance(now, (int, float)) or not isinstance(then, (int, float)):
            continue
        if then > 0 and now < then * (1 - limit):
            found.append(Disturbance(NAMES[resource], now / then, limit, cores=cores))
    return tuple(found)


def _arguments(argv):
    """(cores, resources) of ``--cores N --resources a,b`` (all by default)."""
    cores, resources = 1, RESOURCES
    for flag, value in zip(argv, argv[1:]):
        if flag == '--cores':
            cores = int(value)
        elif flag == '--resources':
            resources = tuple(r for r in value.split(',') if r in RESOURCES)
    return cores, resources


if __name__ == '__main__':
    os.environ.update(ONE_THREAD)
    print(json.dumps(measure_at(*_arguments(sys.argv[1:]))))

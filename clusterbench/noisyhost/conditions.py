"""The conditions a benchmark ran under, measured around its launch.

The job script runs the launcher through this wrapper on the node that runs
the script (``local``: this host; a batch partition: the job's first node)::

    python -m clusterbench.cli.conditions wrap -o conditions.json \\
        --ranks 2 --local -- mpirun -np 2 ./bench

It reads ``/proc/stat`` and the load average before, runs the launcher, waits
for it (``wait4``: the CPU time of the launcher and every rank it reaped), and
reads ``/proc/stat`` again:

* ``steal_share``: CPU time the hypervisor gave to others, of all CPU time of
  the node over the run;
* ``other_cpu_share``: busy CPU time that was not the ranks', of all CPU time;
* ``ranks_cpu_share``: the ranks' CPU seconds / (wall x the CPUs they were
  given), the CPUs given being ranks x ``--cpus-per-rank`` (a rank's
  threads: STREAM's one rank runs one per core) capped at the node's CPUs,
  and the share capped at 100 % (the launcher's own CPU time is counted
  too; ``ranks_cpu_s`` keeps the sum as measured); only where the ranks are
  the launcher's descendants (``--local``). Elsewhere (``srun``:
  slurmstepd starts them) it is absent, with the reason;
* ``load_before``: the 1-minute load average before the launch;
* ``mhz_before``/``mhz_after``: mean current frequency, where readable;
* ``host_probe``: :mod:`clusterbench.noisyhost.hostprobe` run before and after
  the launch, the better of the two per figure (both in ``host_probe_each``).

:func:`disturbed` and :func:`judge_run` give the thresholds a run broke, as
data (:mod:`clusterbench.core.disturbance`, which words them; partition
``extras.noisy_host``, read by :mod:`clusterbench.noisyhost.switch`;
defaults in :data:`DEFAULTS`); :mod:`clusterbench.noisyhost.quiet` waits
until the machine has been quiet for a few seconds.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

from clusterbench.core import disturbance
from clusterbench.core.disturbance import Disturbance, Disturbed, Kind
from clusterbench.machine import hwinfo
from clusterbench.noisyhost import hostprobe

FORMAT = 'clusterbench-conditions/1'
ABSENT = hwinfo.ABSENT

#: Thresholds a run must keep to be judged where a partition has the noisy-host
#: profile (its ``extras.noisy_host`` dict overrides any of them). On the
#: project's 2-CPU VM, a NetPIPE sweep with no
#: other process running showed steal 0-0.1 % and other processes 0 %; with
#: other work beside it, the ranks' share and the others' share summed to
#: 0.99-1.0 over 24-60 s runs. A run of less than a few seconds is mostly
#: MPI start-up, in which the ranks wait (0.35 s NetPIPE runs: ranks' share
#: 17-22 % with nothing else running), so the share is judged only from
#: ``share_min_wall_s`` on.
DEFAULTS = {
    # Steal above 2 % of the node's CPU time: the hypervisor ran others.
    'max_steal': 0.02,
    # Other processes used more than 10 % of the node's CPU time.
    'max_other_cpu': 0.10,
    # The ranks got less than 90 % of the CPUs they were given...
    'min_ranks_cpu_share': 0.90,
    # ...in a run of at least this many seconds.
    'share_min_wall_s': 5.0,
    # The host probe (clusterbench.noisyhost.hostprobe, the better of one before
    # and one after the launch) is more than this much worse than in the
    # sessions its references were made from: the host, not the benchmark,
    # changed. In three quiet make run sessions (57 runs) the probe's session
    # medians stayed within 1 %, but single runs fell to 0.89 (DGEMM) and
    # 0.83 (gather) of them: 4 of 57 runs would break 10 %, none breaks 20 %.
    'max_host_drift': 0.20,
}

#: What /proc/stat's cpu line holds, in order (the rest are guest times,
#: already counted in user and nice).
STAT_FIELDS = ('user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal')
BUSY = ('user', 'nice', 'system', 'irq', 'softirq')


def read_stat(proc='/proc'):
    """({field: seconds}, number of CPUs) of the node's CPU line, or (None, 0)."""
    tick = os.sysconf('SC_CLK_TCK')
    try:
        with open(os.path.join(proc, 'stat')) as f:
            lines = f.read().splitlines()
    except OSError:
        return None, 0
    cpus = sum(1 for line in lines if line.startswith('cpu') and line[3:4].isdigit())
    for line in lines:
        parts = line.split()
        if parts and parts[0] == 'cpu':
            values = [int(v) / tick for v in parts[1 : 1 + len(STAT_FIELDS)]]
            values += [0.0] * (len(STAT_FIELDS) - len(values))
            return dict(zip(STAT_FIELDS, values)), cpus
    return None, cpus


def read_load(proc='/proc'):
    try:
        with open(os.path.join(proc, 'loadavg')) as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def read_mhz(proc='/proc'):
    """Mean 'cpu MHz' of /proc/cpuinfo (a VM reports its nominal clock)."""
    try:
        with open(os.path.join(proc, 'cpuinfo')) as f:
            values = [
                float(line.split(':', 1)[1])
                for line in f
                if line.startswith('cpu MHz') and ':' in line
            ]
    except (OSError, ValueError):
        return None
    return round(sum(values) / len(values), 1) if values else None


class Snapshot:
    def __init__(self, proc='/proc'):
        self.time = time.monotonic()
        self.stat, self.cpus = read_stat(proc)
        self.load = read_load(proc)
        self.mhz = read_mhz(proc)


def measure(before, after, ranks, ranks_cpu=None, cpus_per_rank=1):
    """The conditions between two snapshots; *ranks_cpu*: the ranks' CPU
    seconds, or None where they could not be had; *cpus_per_rank*: the CPUs
    (threads) each rank was given."""
    wall = after.time - before.time
    out, absent = {'format': FORMAT, 'wall_s': round(wall, 3), 'ranks': ranks}, {}
    out['cpus_per_rank'] = cpus_per_rank
    out['cpus'] = after.cpus or ABSENT
    if before.stat and after.stat and wall > 0:
        delta = {k: max(0.0, after.stat[k] - before.stat[k]) for k in STAT_FIELDS}
        total = sum(delta.values())
        busy = sum(delta[k] for k in BUSY)
        out['steal_share'] = round(delta['steal'] / total, 4) if total else 0.0
        if ranks_cpu is not None and total:
            out['other_cpu_share'] = round(max(0.0, busy - ranks_cpu) / total, 4)
        elif total:
            out['other_cpu_share'] = ABSENT
            absent['other_cpu_share'] = "the ranks' CPU time is not known here"
    else:
        for key in ('steal_share', 'other_cpu_share'):
            out[key] = ABSENT
            absent[key] = 'no /proc/stat'
    if ranks_cpu is not None and wall > 0:
        out['ranks_cpu_s'] = round(ranks_cpu, 3)
        given = ranks * max(cpus_per_rank, 1)
        given = min(given, after.cpus or given) or 1
        out['ranks_cpu_share'] = round(min(1.0, ranks_cpu / (wall * given)), 4)
    else:
        out['ranks_cpu_s'] = out['ranks_cpu_share'] = ABSENT
        absent['ranks_cpu_share'] = (
            'the ranks are not descendants of the launcher here (batch launcher)'
        )
    out['load_before'] = before.load if before.load is not None else ABSENT
    if before.load is None:
        absent['load_before'] = 'no /proc/loadavg'
    for key, snap in (('mhz_before', before), ('mhz_after', after)):
        out[key] = snap.mhz if snap.mhz is not None else ABSENT
        if snap.mhz is None:
            absent[key] = 'no "cpu MHz" in /proc/cpuinfo'
    out['absent'] = absent
    return out


def thresholds(extras, local=True):
    """The partition's thresholds: ``extras.conditions`` over :data:`DEFAULTS`.

    ``max_host_drift`` is judged by default only where the job runs on the
    host that measures it (*local*: a VM whose host is shared). On a batch
    partition of dedicated nodes a slower node *is* the regression, so it is
    off (None) unless the partition sets it.
    """
    given = (extras or {}).get('conditions') or {}
    found = {**DEFAULTS, **{k: given[k] for k in DEFAULTS if given.get(k) is not None}}
    if not local and given.get('max_host_drift') is None:
        found['max_host_drift'] = None
    return found


def disturbed(conditions, limits=DEFAULTS):
    """What the run broke of the CPU thresholds (a
    :class:`~clusterbench.core.disturbance.Disturbed`: '' for a run within
    them), e.g. "steal 18 %, ranks' CPU share 71 %"."""
    found = []

    def number(key):
        value = (conditions or {}).get(key)
        return value if isinstance(value, (int, float)) else None

    steal = number('steal_share')
    if steal is not None and steal > limits['max_steal']:
        found.append(Disturbance(Kind.STEAL, steal, limits['max_steal']))
    share = number('ranks_cpu_share')
    long_enough = (number('wall_s') or 0) >= limits['share_min_wall_s']
    limit = limits['min_ranks_cpu_share']
    if share is not None and long_enough and share < limit:
        found.append(Disturbance(Kind.RANKS_CPU_SHARE, share, limit))
    other = number('other_cpu_share')
    if other is not None and other > limits['max_other_cpu']:
        found.append(Disturbance(Kind.OTHER_PROCESSES, other, limits['max_other_cpu']))
    return Disturbed(found)


def judge_run(found, limits, reference_probe):
    """What a run broke (a :class:`~clusterbench.core.disturbance.Disturbed`,
    '' if nothing), and the host probe's reference kept in *found*.
    *limits*: the partition's thresholds (None: the profile is off, nothing
    is judged); *reference_probe*: called only when the host probe is
    judged, returns the probe's figures in the references' sessions ({} if
    none)."""
    if limits is None:
        return Disturbed()
    broke = list(disturbed(found, limits).parts)
    probe = found.get('host_probe')
    if limits['max_host_drift'] is not None and isinstance(probe, dict):
        reference = reference_probe()
        found['host_probe_reference'] = reference or ABSENT
        limit = limits['max_host_drift']
        broke += hostprobe.drift(probe, reference, limit)
        # What the test itself uses, at its parallelism: one core cannot see
        # neighbours that take the bandwidth of the others.
        broke += hostprobe.drift_at_parallelism(probe, reference, limit)
    return Disturbed(broke)


def format_line(found):
    """'3.2 s, steal 0 %, others 1 %, ranks 98 %, load 0.12, 2596 MHz[: DISTURBED]'."""

    def pct(key):
        value = found.get(key)
        return (
            f'{value:.0%}'.replace('%', ' %') if isinstance(value, float) else 'absent'
        )

    if 'wall_s' not in found:
        return 'not measured: ' + '; '.join((found.get('absent') or {}).values())
    text = (
        f'{found["wall_s"]:g} s, steal {pct("steal_share")}, others '
        f'{pct("other_cpu_share")}, ranks {pct("ranks_cpu_share")}, load '
        f'{found.get("load_before", ABSENT)}, {found.get("mhz_after", ABSENT)} MHz'
    )
    probe = found.get('host_probe')
    if isinstance(probe, dict):
        text += (
            f', host {probe["dgemm_gflops"]:g} GF/s {probe["gather_mups"]:g} '
            f'Mread/s {probe["copy_gbs"]:g} GB/s'
        )
        if isinstance(probe.get('mem_gbs'), (int, float)):
            text += f' ({probe["mem_gbs"]:g} GB/s on {probe.get("cores")} cores)'
    broke = disturbance.of_conditions(found)
    if broke:
        text += f': DISTURBED ({broke})'
    return text


def run_wrapped(
    argv,
    output,
    ranks,
    local,
    probe=True,
    cpus_per_rank=1,
    resources=hostprobe.RESOURCES,
):
    """Run *argv*, measure around it, write *output*; return its exit code.
    With *probe*, the host probe runs before the CPU counters start and after
    they stop, measuring *resources* on the ranks' cores."""
    cores = max(1, ranks * cpus_per_rank)

    def probed():
        return hostprobe.probe(cores=cores, resources=resources)

    found_probe = probed() if probe else None
    env = dict(os.environ)
    # The job's LD_PRELOAD (a profiler) is for the benchmark, not for us: the
    # job script moved it aside for this interpreter.
    preload = env.pop('_CB_LD_PRELOAD', '')
    if preload:
        env['LD_PRELOAD'] = preload
    before = Snapshot()
    try:
        child = subprocess.Popen(argv, env=env)
    except OSError as err:
        print(
            f'clusterbench.noisyhost.conditions: {argv[0]}: {err.strerror}',
            file=sys.stderr,
        )
        return 127

    def forward(signum, _frame):
        child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        try:
            _, status, usage = os.wait4(child.pid, 0)
            break
        except InterruptedError:
            continue
    child.returncode = os.waitstatus_to_exitcode(status)
    after = Snapshot()
    cpu = usage.ru_utime + usage.ru_stime if local else None
    out = measure(before, after, ranks, cpu, cpus_per_rank)
    out['host'] = socket.gethostname()
    out['exit_code'] = child.returncode
    if found_probe is not None:
        # Once more after the run: a neighbour's burst rarely spans both
        # probes, a slower host state does.
        probes = [found_probe, probed()]
        best = hostprobe.best(probes)
        if 'absent' in best:
            out['host_probe'] = ABSENT
            out['absent']['host_probe'] = best['absent']
        else:
            out['host_probe'] = best
            out['host_probe_each'] = probes
    facts = hwinfo.Collector().identity_facts()
    out['identity'] = hwinfo.identity(facts)
    try:
        with open(output, 'w') as f:
            json.dump(out, f, indent=1)
            f.write('\n')
    except OSError as err:
        print(
            f'clusterbench.noisyhost.conditions: {output}: {err.strerror}',
            file=sys.stderr,
        )
    code = child.returncode
    return 128 - code if code < 0 else code


def load(path):
    """The conditions written by ``wrap``, or {} (with 'absent') if none."""
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


if __name__ == '__main__':
    # The program is the command line's (argparse lives in cli alone).
    print(
        'clusterbench: error: clusterbench.noisyhost.conditions is a library: '
        'run python -m clusterbench.cli.conditions',
        file=sys.stderr,
    )
    sys.exit(2)

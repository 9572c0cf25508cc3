"""Bring-up and status of the test cluster.

A real Slurm 22.05 cluster on this machine: munged, MariaDB, slurmdbd and
slurmctld in the root namespace, and one slurmd per node, each in a network
namespace of its own with its own address on a bridge, so that MPI between
nodes crosses a (virtual) network over TCP. Each slurmd is pinned to a core.

Everything the cluster creates is recorded, as it is created, in
``state.json`` of the run directory, so that
:func:`clusterbench.testcluster.teardown.down` removes exactly that, even
after a bring-up that failed half-way: the processes it started (checked by
PID *and* start time, never by name) and what they started in the nodes'
namespaces, the namespaces, veths and bridge, the cgroups of injected faults,
and the run directory itself.
"""

import os
import pwd
import shutil
import socket
import string
import time

from clusterbench.core.errors import ClusterbenchError
from clusterbench.testcluster.network import (
    BRIDGE,
    HOST_ADDR,
    create,
    netns_name,
    node_addr,
    our_netns,
    veth_name,
)
from clusterbench.testcluster.procs import BringUpError, Starter, alive, last_error
from clusterbench.testcluster.slurm import node_states, start_slurmd
from clusterbench.testcluster.state import DEFAULT_RUN_DIR, State, locked
from clusterbench.testcluster.teardown import tear_down

#: The run directory (state, configuration, logs, spool) unless told otherwise.
CLUSTER = 'box'
PARTITION = 'compute'
CTLD_PORT = 16817
DBD_PORT = 16819
SLURMD_BASE_PORT = 17000
SLURMD_TIMEOUT = 6
MAX_NODES = 64
TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'templates')

#: Programs the cluster needs, and the Debian package that provides each.
PROGRAMS = {
    'munged': 'munge',
    'mariadbd': 'mariadb-server',
    'slurmdbd': 'slurmdbd',
    'slurmctld': 'slurm-wlm',
    'slurmd': 'slurm-wlm',
    'sacctmgr': 'slurm-wlm',
    'sinfo': 'slurm-wlm',
    'ip': 'iproute2',
    'tc': 'iproute2',
    'nft': 'nftables',
    'nsenter': 'util-linux',
    'unshare': 'util-linux',
    'taskset': 'util-linux',
}
DEBIAN_PACKAGES = 'slurm-wlm munge slurmdbd mariadb-server nftables iproute2'


def node_name(index):
    return f'n{index}'


# --------------------------------------------------------------------------
# Bring-up.


def _port_free(port, addr='0.0.0.0'):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((addr, port))
        except OSError:
            return False
    return True


def _listening(port, addr='127.0.0.1'):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((addr, port)) == 0


def preflight(nodes, run_dir=DEFAULT_RUN_DIR):
    """Everything bring-up needs, or a :class:`BringUpError` saying what is not."""
    if not 1 <= nodes <= MAX_NODES:
        raise BringUpError(f'--nodes must be 1..{MAX_NODES}, not {nodes}')
    if os.geteuid() != 0:
        raise BringUpError(
            'needs root (network namespaces, a bridge, daemons run as root)'
        )
    missing = sorted({pkg for prog, pkg in PROGRAMS.items() if not shutil.which(prog)})
    if missing:
        raise BringUpError(
            f'missing Debian package(s) {" ".join(missing)} '
            f'(needs: {DEBIAN_PACKAGES}); run scripts/setup.sh'
        )
    for user in ('munge', 'mysql'):
        try:
            pwd.getpwnam(user)
        except KeyError:
            raise BringUpError(
                f'no {user!r} user (is its package installed?)'
            ) from None
    state = State.load(run_dir)
    if state is not None:
        raise BringUpError(
            f'a test cluster is already recorded in {run_dir} '
            f'({len(state.nodes())} nodes); run `clusterbench testcluster '
            f'down` first'
        )
    if os.path.exists(f'/sys/class/net/{BRIDGE}'):
        raise BringUpError(
            f'network device {BRIDGE} already exists (a test cluster not '
            f'recorded in {run_dir}?); `clusterbench testcluster down` '
            f'removes it'
        )
    taken = our_netns()
    if taken:
        raise BringUpError(
            f'network namespace(s) {", ".join(taken)} already exist; '
            f'`clusterbench testcluster down` removes them'
        )
    # The slurmds listen inside their namespaces: only these two can collide.
    busy = [p for p in (CTLD_PORT, DBD_PORT) if not _port_free(p)]
    if busy:
        raise BringUpError(
            f'TCP port(s) {", ".join(map(str, busy))} in use (slurmctld, slurmdbd '
            f'of the test cluster need them)'
        )


def _host_memory_mb():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemTotal:'):
                return int(line.split()[1]) // 1024
    return 1024


def _write_template(name, dest, mode, **values):
    with open(os.path.join(TEMPLATES, name)) as f:
        text = string.Template(f.read()).substitute(values)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, 'w') as f:
        f.write(text)


def up(nodes=2, run_dir=DEFAULT_RUN_DIR, out=None):
    """Bring up a cluster of *nodes* nodes; return its :class:`State`.

    On any failure everything created so far is torn down again and a
    :class:`BringUpError` with one line saying why is raised.
    """
    t0 = time.monotonic()
    with locked(run_dir):
        preflight(nodes, run_dir)
        os.makedirs(run_dir, mode=0o755)
        os.chmod(run_dir, 0o755)
        state = State(run_dir, {'version': 1, 'cluster': CLUSTER})
        state.save()
        try:
            _bring_up(state, nodes)
        except BaseException as err:
            try:
                if not os.environ.get('CLUSTERBENCH_BOX_KEEP_FAILED'):
                    tear_down(state)
            finally:
                if isinstance(err, ClusterbenchError):
                    raise BringUpError(str(err)) from None
                if isinstance(err, OSError):
                    raise BringUpError(
                        f'{err.filename or ""}: {err.strerror}'
                    ) from None
            raise
        state['up_seconds'] = round(time.monotonic() - t0, 2)
        state.save()
    if out:
        print(summary(state), file=out)
    return state


def _bring_up(state, count):
    run_dir = state.run_dir
    host = socket.gethostname().split('.')[0]
    ncpu = len(os.sched_getaffinity(0)) or 1
    cpus = sorted(os.sched_getaffinity(0))
    mem_mb = max(256, _host_memory_mb() // count - 256)
    nodes = []
    for i in range(1, count + 1):
        name = node_name(i)
        nodes.append(
            {
                'name': name,
                'addr': node_addr(i),
                'netns': netns_name(name),
                'veth': veth_name(name),
                'port': SLURMD_BASE_PORT + i,
                'cpu': cpus[(i - 1) % ncpu],
            }
        )
    state.update(
        {
            'host': host,
            'host_addr': HOST_ADDR,
            'partition': PARTITION,
            'cpus_per_node': 1,
            'mem_per_node_mb': mem_mb,
            'nodes': nodes,
            'slurm_conf': os.path.join(run_dir, 'etc', 'slurm.conf'),
            'faults': {},
        }
    )
    state.save()
    start = Starter(state)
    t0 = time.monotonic()
    timings = state.setdefault('timings', {})

    def mark(step):
        timings[step] = round(time.monotonic() - t0, 2)

    for sub in ('etc', 'ctld/state', 'dbd', 'log'):
        os.makedirs(start.path(sub), exist_ok=True)
    for node in nodes:
        for sub in ('spool', 'tmp'):
            os.makedirs(start.path('nodes', node['name'], sub), exist_ok=True)

    # munge: a key and a daemon of the cluster's own.
    munge_dir = start.path('munge')
    os.makedirs(munge_dir, mode=0o755)
    munge = pwd.getpwnam('munge')
    key = os.path.join(munge_dir, 'munge.key')
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    with os.fdopen(fd, 'wb') as f:
        f.write(os.urandom(1024))
    for path in (munge_dir, key):
        os.chown(path, munge.pw_uid, munge.pw_gid)
    munge_socket = os.path.join(munge_dir, 'munged.sock')
    munge_log = start.path('log', 'munged.log')
    open(munge_log, 'a').close()
    os.chown(munge_log, munge.pw_uid, munge.pw_gid)
    munged = start.spawn(
        'munged',
        [
            'munged',
            '--foreground',
            f'--socket={munge_socket}',
            f'--key-file={key}',
            f'--pid-file={munge_dir}/munged.pid',
            f'--seed-file={munge_dir}/munged.seed',
            f'--log-file={munge_log}',
            '--num-threads=4',
        ],
        munge_log,
        user='munge',
    )

    # MariaDB for accounting: a data directory and socket of its own, no TCP.
    mysql = pwd.getpwnam('mysql')
    db_dir = start.path('mysql')
    os.makedirs(os.path.join(db_dir, 'data'), mode=0o700)
    for path in (db_dir, os.path.join(db_dir, 'data')):
        os.chown(path, mysql.pw_uid, mysql.pw_gid)
        os.chmod(path, 0o700)
    db_socket = os.path.join(db_dir, 'mysqld.sock')
    db_log = start.path('log', 'mariadbd.log')
    mariadbd = start.spawn(
        'mariadbd',
        [
            'mariadbd',
            '--no-defaults',
            '--user=mysql',
            f'--datadir={db_dir}/data',
            f'--socket={db_socket}',
            f'--pid-file={db_dir}/mariadbd.pid',
            f'--log-error={db_log}',
            # Only root reaches the socket (its directory is mysql's, mode 700,
            # and root's): grant tables are not needed for a throw-away database.
            '--skip-networking',
            '--skip-grant-tables',
            '--skip-name-resolve',
            '--skip-log-bin',
            '--innodb-buffer-pool-size=32M',
            '--innodb-log-file-size=8M',
            '--innodb-data-file-path=ibdata1:8M:autoextend',
            '--innodb-flush-log-at-trx-commit=0',
            '--innodb-doublewrite=0',
            # Accounting of a throw-away cluster need not survive a power cut:
            # no fsync, one tablespace (slurmdbd creates ~40 tables at start).
            '--innodb-flush-method=nosync',
            '--innodb-file-per-table=0',
        ],
        db_log,
    )

    # The network, while those two start.
    create(state, nodes)
    mark('network')

    node_lines = '\n'.join(
        f'NodeName={n["name"]} NodeAddr={n["addr"]} NodeHostname={n["name"]} '
        f'Port={n["port"]} CPUs=1 Sockets=1 CoresPerSocket=1 ThreadsPerCore=1 '
        f'RealMemory={mem_mb} State=UNKNOWN'
        for n in nodes
    )
    values = {
        'cluster': CLUSTER,
        'run_dir': run_dir,
        'host': host,
        'host_addr': HOST_ADDR,
        'ctld_port': CTLD_PORT,
        'dbd_port': DBD_PORT,
        'munge_socket': munge_socket,
        'slurmd_timeout': SLURMD_TIMEOUT,
        'node_lines': node_lines,
        'partition': PARTITION,
        'node_list': ','.join(n['name'] for n in nodes),
    }
    _write_template('slurm.conf.in', state.slurm_conf, 0o644, **values)
    dbd_conf = start.path('etc', 'slurmdbd.conf')
    _write_template('slurmdbd.conf.in', dbd_conf, 0o600, **values)
    env = {**state.env(), 'MYSQL_UNIX_PORT': db_socket}

    start.wait_for('munged', lambda: os.path.exists(munge_socket), [munged], munge_log)
    mark('munged')
    start.wait_for('mariadbd', lambda: os.path.exists(db_socket), [mariadbd], db_log)
    mark('mariadbd')

    dbd_log = start.path('dbd', 'slurmdbd.log')
    # slurmdbd reads slurmdbd.conf beside $SLURM_CONF.
    slurmdbd = start.spawn('slurmdbd', ['slurmdbd', '-D'], dbd_log, env=env)
    start.wait_for(
        'slurmdbd', lambda: _listening(DBD_PORT), [slurmdbd], dbd_log, timeout=20
    )
    mark('slurmdbd')

    ctld_log = start.path('ctld', 'slurmctld.log')
    slurmctld = start.spawn(
        'slurmctld', ['slurmctld', '-D', '-f', state.slurm_conf], ctld_log, env=env
    )
    start.wait_for(
        'slurmctld', lambda: _listening(CTLD_PORT), [slurmctld], ctld_log, timeout=20
    )

    mark('slurmctld')
    slurmds = [(node, start_slurmd(state, node, env)) for node in nodes]

    def all_idle():
        return set(node_states(state).values()) <= {'idle'}

    deadline = time.monotonic() + 20
    while not all_idle():
        for node, proc in slurmds:
            if proc.poll() is not None:
                log = start.path('nodes', node['name'], 'slurmd.log')
                raise BringUpError(
                    f'slurmd of {node["name"]} exited at start (code '
                    f'{proc.returncode}): {last_error(log)}'
                )
        if time.monotonic() > deadline:
            states = node_states(state)
            bad = [f'{n}={s}' for n, s in states.items() if s != 'idle']
            raise BringUpError(f'nodes not idle after 20 s: {", ".join(bad)}')
        time.sleep(0.1)
    mark('nodes idle')


# --------------------------------------------------------------------------
# Status.


def summary(state):
    nodes = state.nodes()
    lines = [
        f'test cluster {state.get("cluster", CLUSTER)}: {len(nodes)} node(s), '
        f'partition {state.get("partition", PARTITION)}, run directory '
        f'{state.run_dir}'
        + (f', up in {state["up_seconds"]:.1f} s' if 'up_seconds' in state else ''),
        f'  export SLURM_CONF={state.slurm_conf}',
    ]
    states = node_states(state) if nodes else {}
    for node in nodes:
        lines.append(
            f'  {node["name"]:4} {node["addr"]:12} cpu {node["cpu"]}  '
            f'slurmd {"running" if alive(node.get("slurmd")) else "DEAD"}  '
            f'slurm state {states.get(node["name"], "?")}'
        )
    for key, proc in sorted(state.get('daemons', {}).items()):
        lines.append(
            f'  {key:10} pid {proc["pid"]:<7} {"running" if alive(proc) else "DEAD"}'
        )
    for node, injected in sorted(state.get('faults', {}).items()):
        for kind, detail in sorted(injected.items()):
            lines.append(f'  fault on {node}: {kind} {detail}')
    return '\n'.join(lines)


def status(run_dir=DEFAULT_RUN_DIR):
    """``(healthy, text)``: whether every daemon runs and every node is idle/alloc."""
    state = State.load(run_dir)
    if state is None:
        return False, f'no test cluster recorded in {run_dir}'
    daemons = state.get('daemons', {})
    healthy = all(alive(p) for p in daemons.values()) and all(
        alive(n.get('slurmd')) for n in state.nodes()
    )
    return healthy, summary(state)

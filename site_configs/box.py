"""System ``box``: the Slurm test cluster of ``clusterbench.testcluster``.

``clusterbench testcluster up --nodes N`` brings up a real Slurm 22.05
cluster on this machine: N nodes ``n1..nN``, each a slurmd in a network
namespace of its own (10.99.0.11, .12, ...) pinned to one core, so MPI between
nodes crosses a network over TCP. This file reads the cluster's state (its run
directory, ``$CLUSTERBENCH_BOX_DIR`` or ``/run/clusterbench-box``) for the node
count and the memory per node; with no cluster up it still loads (2 nodes).

Slurm's client commands that ReFrame's ``slurm`` backend runs (sbatch, sacct,
squeue, scontrol) find the cluster through ``SLURM_CONF``: when that is unset
and a cluster is up, loading this file sets it to the cluster's slurm.conf.

Environments (composed from common.py):

* ``gnu-openmpi``: ``srun --mpi=pmix`` (Debian's Open MPI has PMIx only), TCP
  only and only on the nodes' ``eth0`` (else Open MPI could use shared memory
  between "nodes" that share one host);
* ``gnu-mpich``: ``srun --mpi=pmi2`` (with pmix or none MPICH silently runs N
  one-rank jobs), and UCX held to TCP on ``eth0`` for the same reason.

Known defect: Debian's MPICH 4.0.2 (ch4:ucx) can hang in ``MPI_Finalize`` of a
multi-node run over UCX's TCP transport, after the results are written: one
rank waits in a PMI barrier while its peer's UCX flush needs it to progress
(MPICH 4.2 removed that barrier, pmodels/mpich#6596). A few percent of runs;
such a job ends at its time limit (``job N ended TIMEOUT``): give MPICH runs a
short ``-S time_limit=`` and ``--max-retries``.
"""

import json
import os
import runpy

from reframe.utility.cpuinfo import cpuinfo

HERE = os.path.dirname(os.path.abspath(__file__))
common = runpy.run_path(os.path.join(HERE, 'common.py'))
RUN_DIR = os.environ.get('CLUSTERBENCH_BOX_DIR', '/run/clusterbench-box')


def _cluster_state():
    try:
        with open(os.path.join(RUN_DIR, 'state.json')) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


_state = _cluster_state()
if _state.get('slurm_conf'):
    os.environ.setdefault('SLURM_CONF', _state['slurm_conf'])
_nodes = [n['name'] for n in _state.get('nodes', [])] or ['n1', 'n2']
_host_share = common['host_memory_bytes']() // len(_nodes)
_mem_per_node = _state.get('mem_per_node_mb', 0) * 2**20 or _host_share


def _node_processor():
    """This host's processor facts, as one node of the box sees it: one core."""
    facts = {k: v for k, v in cpuinfo().items() if k != 'topology'}
    facts.update(num_cpus=1, num_cpus_per_core=1, num_cpus_per_socket=1, num_sockets=1)
    return facts


def _with_env_vars(environ, env_vars):
    # common.py's functions take no extra variables (yet): append them here.
    environ['env_vars'] = [*environ['env_vars'], *env_vars]
    return environ


site_configuration = {
    'systems': [
        {
            'name': 'box',
            'descr': 'The clusterbench Slurm test cluster on this machine',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            # A job pending on a lost node is cancelled within seconds.
            'sched_options': {'slurm_pending_job_reason_poll_freq': 2},
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'One core per node, nodes in network namespaces',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'access': ['--partition=compute'],
                    'environs': ['gnu-openmpi', 'gnu-mpich'],
                    'max_jobs': 64,
                    'features': ['multinode'],
                    'processor': _node_processor(),
                    'extras': {
                        'mem_per_node': _mem_per_node,
                        # The nodes are namespaces of this host: its CPU.
                        'cpu_kind': common['cpu_kind'](),
                        'num_nodes': len(_nodes),
                        # Off, as for any cluster: a slow node is the finding.
                        # 'noisy_host': True,  # see docs/noisy-host.md
                        'nodes': _nodes,
                        'acceptance': {
                            # The nodes share the host's cores with whatever
                            # else runs there: two healthy nodes' figures differ
                            # by up to ~35 % on a busy host, so a node is
                            # flagged 3.5 x 15 % below its peers, not 3.5 x 5 %.
                            'min_spread': 0.15,
                            # What every link of this (virtual) fabric must do,
                            # loose enough for a busy host: a veth gives ~200
                            # MB/s when the host is loaded, ~1.5 GB/s when idle.
                            'link_bandwidth_min_mbs': 50.0,
                            'link_latency_max_us': 500.0,
                            'link_stall_max': 0.01,
                        },
                    },
                }
            ],
        }
    ],
    'environments': [
        _with_env_vars(
            common['gnu_openmpi'](extra_features=['hpcc'], target_systems=['box']),
            [
                ['SLURM_MPI_TYPE', 'pmix'],
                ['OMPI_MCA_pml', 'ob1'],
                ['OMPI_MCA_btl', 'tcp,self'],
                ['OMPI_MCA_btl_tcp_if_include', 'eth0'],
            ],
        ),
        _with_env_vars(
            common['gnu_mpich'](target_systems=['box']),
            [
                ['SLURM_MPI_TYPE', 'pmi2'],
                ['UCX_TLS', 'tcp,self'],
                ['UCX_NET_DEVICES', 'eth0'],
            ],
        ),
    ],
    'general': common['general'](),
    'storage': common['storage'](),
    'logging': common['logging'](),
}

"""Scaling tests are generated only up to each partition's node count, and
`reframe --dry-run` passes the checks (issue 30, findings 7 and 8).

Real ReFrame (a dry run: nothing is submitted) on a site config of two
multi-node Slurm partitions of 2 and 4 nodes, written here; no cluster is
needed to generate the tests.
"""

import json
import os
import subprocess
import sys
import textwrap

from conftest import PROJECT

from clusterbench.checks.acceptance import NODE_COUNTS, node_counts

REFRAME = os.path.join(os.path.dirname(sys.executable), 'reframe')

TWO_PARTITIONS = textwrap.dedent("""\
    import runpy

    from clusterbench.core import paths

    common = runpy.run_path(paths.site_config('common.py'))


    def partition(name, nodes):
        return {
            'name': name,
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': [f'--partition={name}'],
            'environs': ['gnu-openmpi'],
            'features': ['multinode'],
            'processor': {
                'num_cpus': 1,
                'num_cpus_per_core': 1,
                'num_cpus_per_socket': 1,
                'num_sockets': 1,
            },
            'extras': {'num_nodes': nodes, 'mem_per_node': 2**32},
        }


    site_configuration = {
        'systems': [
            {
                'name': 'two',
                'hostnames': ['.*'],
                'partitions': [partition('small', 2), partition('big', 4)],
            }
        ],
        'environments': [common['gnu_openmpi'](target_systems=['two'])],
    }
""")


class Part:
    """What node_counts reads of a ReFrame partition."""

    class scheduler:
        registered_name = 'slurm'

    def __init__(self, nodes, features=('multinode',)):
        self.name = f'p{nodes}'
        self.fullname = f'sys:p{nodes}'
        self.extras = {} if nodes is None else {'num_nodes': nodes}
        self.features = list(features)


def test_counts_up_to_the_largest_partition():
    assert node_counts([Part(2)]) == [1, 2]
    assert node_counts([Part(2), Part(4)]) == [1, 2, 4]
    assert node_counts([Part(6)]) == [1, 2, 4, 6]
    assert node_counts([Part(16), Part(1, features=())]) == [1, 2, 4, 8, 16]
    # A partition whose size is not declared: the default series.
    assert node_counts([Part(None)]) == list(NODE_COUNTS)


def test_each_partition_gets_only_the_counts_it_holds(tmp_path):
    config = tmp_path / 'two.py'
    config.write_text(TWO_PARTITIONS)
    report_file = tmp_path / 'report.json'
    proc = subprocess.run(
        [REFRAME, '-C', str(config), '-c', f'{PROJECT}/reframe_checks/acceptance.py']
        + ['-n', 'CGScalingCheck', '--prefix', str(tmp_path / 'rfm'), '--nocolor']
        + ['--report-file', str(report_file), '--dry-run'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        # A dry run asks Slurm nothing but its version: with a SLURM_CONF of a
        # test cluster that is down, each srun waits a minute for the file.
        env={
            **{k: v for k, v in os.environ.items() if k != 'SLURM_CONF'},
            'RFM_SQLITE_DB_FILE': str(tmp_path / 'results.db'),
        },
        timeout=600,
        check=False,
    )
    code, output = proc.returncode, proc.stdout + proc.stderr
    report = json.loads(report_file.read_text())
    assert code == 0, output
    cases = [c for r in report['runs'] for c in r['testcases'] if not c['fixture']]
    counts = {}
    for case in cases:
        counts.setdefault(case['partition'], set()).add(case['node_count'])
    assert counts == {'small': {1, 2}, 'big': {1, 2, 4}}
    # A dry run generates the job scripts and fails nothing.
    assert {c['result'] for c in cases} == {'pass'}, json.dumps(cases)[:2000]

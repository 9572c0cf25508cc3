"""What `clusterbench site init` writes for a real cluster (issue 30, finding
4), on a fake Slurm: partitions split by node features, the centre's access
options, max_jobs, cpu_kind, perflogs under the results root, one TODO count,
and "Slurm only" said. `scontrol`, `srun` and `module` are small scripts on
PATH, so that the real program runs as a site admin runs it. (On the real
test cluster, with the inter-node restrictions: tests/cli/test_adoption_e2e.py.)
"""

import json
import os
import subprocess
import sys

from rfm import tool
from test_bad_inputs_site import fake_cluster

REFRAME = os.path.join(os.path.dirname(sys.executable), 'reframe')
#: Two nodes of one Slurm partition with different features.
NODES = (
    'NodeName=n{n} NodeAddr=10.0.0.{n} CPUTot=4 Sockets=1 CoresPerSocket=4 '
    'ThreadsPerCore=1 RealMemory={mem} AvailableFeatures={features} Gres=(null)\n'
)
SCONTROL = """#!/bin/sh
case "$2" in
partition) cat "$FAKE_CLUSTER/partitions" ;;
node) cat "$FAKE_CLUSTER/nodes" ;;
hostnames) echo "$3" | tr , ' ' ;;
*) exit 1 ;;
esac
"""


def split_cluster(tmp_path):
    env = fake_cluster(tmp_path)
    fake = tmp_path / 'fake'
    (fake / 'bin' / 'scontrol').write_text(SCONTROL)
    (fake / 'partitions').write_text('PartitionName=compute Nodes=n1,n2\n')
    (fake / 'nodes').write_text(
        NODES.format(n=1, mem=8000, features='ib,hdr')
        + NODES.format(n=2, mem=16000, features='eth')
    )
    return env


def site_init(tmp_path, env, *args):
    return subprocess.run(
        [tool('clusterbench'), 'site', 'init', '--system', 'newsite']
        + ['--out', str(tmp_path / 'out'), '--no-check', *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, **env},
        check=False,
    )


def test_partitions_split_by_node_features_with_access_and_max_jobs(tmp_path):
    env = split_cluster(tmp_path)
    proc = site_init(tmp_path, env, '--access=--account=proj1', '--access=--qos=bench')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = tmp_path / 'out' / 'site_configs' / 'newsite.py'
    text = config.read_text()
    # The CLI and the file header count the same TODOs.
    todos = text.count('# TODO:')
    assert f'{todos} fact(s) could not be determined' in text
    assert proc.stdout.splitlines()[-1] == f'{todos} TODO(s) in {config}'
    # The fake srun runs nothing: what the nodes would tell is a TODO.
    assert '# TODO: cpu_kind: ' in text and 'the nodes must see this venv' in text
    shown = subprocess.run(
        [REFRAME, '-C', str(config), '--system', 'newsite', '--show-config']
        + ['--nocolor'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    site = json.loads(shown.stdout[shown.stdout.index('{') :])
    parts = {p['name']: p for p in site['systems'][0]['partitions']}
    # One partition per set of features: their nodes no longer "differ".
    assert set(parts) == {'compute-hdr_ib', 'compute-eth'}
    assert parts['compute-hdr_ib']['access'] == [
        '--partition=compute',
        '--constraint=hdr&ib',
        '--account=proj1',
        '--qos=bench',
    ]
    assert parts['compute-eth']['extras']['mem_per_node'] == 16000 * 2**20
    assert parts['compute-eth']['extras']['nodes'] == ['n2']
    assert parts['compute-eth']['max_jobs'] == 1
    # The perflogs under the results root, with the database.
    handler = site['logging'][0]['handlers_perflog'][0]
    assert handler['basedir'].endswith('/results/perflogs')
    assert site['storage'][0]['sqlite_db_file'].endswith('/results/results.db')


def test_an_access_option_that_would_reach_a_script_is_refused(tmp_path):
    env = split_cluster(tmp_path)
    for given, line in (
        (
            '--access=--qos=a\ntouch X',
            "--access: '--qos=a\\ntouch X': not a scheduler option (one line, "
            'no control characters)',
        ),
        (
            '--access=qos=normal',
            "--access 'qos=normal': not a scheduler option (e.g. "
            '--access=--account=NAME, --access=--qos=NAME)',
        ),
    ):
        proc = site_init(tmp_path, env, given)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr == f'clusterbench: error: {line}\n'
        assert not (tmp_path / 'out').exists()


def test_site_init_says_it_reads_slurm_only(tmp_path):
    slurm_only = (
        'clusterbench site init reads Slurm only; for another scheduler write '
        'site_configs/NAME.py by hand (site_configs/example-site.py is a worked '
        'example)'
    )
    proc = site_init(tmp_path, {}, '--scheduler', 'pbs')
    assert proc.returncode == 2
    assert proc.stderr == f'clusterbench: error: --scheduler pbs: {slurm_only}\n'
    no_slurm = {'PATH': str(tmp_path)}  # no scontrol on it
    proc = site_init(tmp_path, no_slurm)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        'clusterbench: error: cannot read the cluster: scontrol show partition '
        f'failed: scontrol: not found ({slurm_only})\n'
    )

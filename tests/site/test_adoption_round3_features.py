"""Issue 41: a check that no environment can run is a skip line that names
the feature and how to enable it, and ``site init`` enables (and says) what
the nodes have installed.

On ``local`` with a configuration whose one environment lacks ``hpcc`` and
``netpipe``: ``clusterbench run`` lists HPCCCheck under ``Skipped:`` (before,
ReFrame made no test case and the summary said nothing), but not a check the
run's filters left out. On the box: ``site init`` finds Debian's ``hpcc`` and
``NPopenmpi`` on the nodes, says so, and plain ReFrame then lists HPCC and
NetPIPE on the generated configuration.
"""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import PROJECT

from clusterbench.site import benchfind, sitefacts, siteinit
from clusterbench.site.scheduler import slurm
from clusterbench.testcluster import testing

CLUSTERBENCH = os.path.join(os.path.dirname(sys.executable), 'clusterbench')
REFRAME = os.path.join(os.path.dirname(sys.executable), 'reframe')
REASON = testing.unavailable()

#: A one-node system whose one environment has neither hpcc nor netpipe.
NO_HPCC = textwrap.dedent(f"""\
    import runpy
    common = runpy.run_path({os.path.join(PROJECT, 'site_configs', 'common.py')!r})
    site_configuration = {{
        'systems': [{{
            'name': 'nohpcc',
            'descr': 'no environment offers hpcc',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [{{
                'name': 'default',
                'scheduler': 'local',
                'launcher': 'mpirun',
                'environs': ['gnu-mpich'],
                'max_jobs': 1,
            }}],
        }}],
        'environments': [common['gnu_mpich'](target_systems=['nohpcc'])],
        'general': common['general'](),
        'storage': common['storage'](),
        'logging': common['logging'](),
    }}
""")


@pytest.mark.integration
def test_a_check_no_environment_can_run_is_a_skip_line_naming_the_feature(tmp_path):
    config = tmp_path / 'site_configs' / 'nohpcc.py'
    config.parent.mkdir()
    config.write_text(NO_HPCC)
    proc = subprocess.run(
        [
            CLUSTERBENCH,
            'run',
            '--config',
            str(config),
            '--system',
            'nohpcc',
            '--results',
            str(tmp_path / 'results'),
            '--',
            '-n',
            'HPCCCheck|NetPIPECheck',
            '-x',
            'NetPIPECheck',
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    out = proc.stdout + proc.stderr
    # The table wraps long lines (a path at its hyphens too): compared
    # without the white space.
    skipped = ''.join(out[out.index('\nSkipped:\n') :].split())
    line = (
        '1 HPCCCheck test: no environment of nohpcc:default has the feature hpcc: '
        f"add 'hpcc' to an environment's features in {config} (clusterbench site "
        'init does where hpcc is installed)'
    )
    assert ''.join(line.split()) in skipped, out
    # NetPIPE lacks its feature too, but the run's filters left it out.
    assert 'NetPIPE' not in skipped and 'NetPIPECheck /' not in out, out


@pytest.mark.integration
@pytest.mark.skipif(REASON is not None, reason=REASON or '')
def test_site_init_on_the_box_enables_and_says_the_installed_benchmarks(tmp_path):
    out = tmp_path / 'site'
    with testing.cluster_up(2) as state:
        env = {**os.environ, 'SLURM_CONF': state.slurm_conf}
        proc = subprocess.run(
            [CLUSTERBENCH, 'site', 'init', '--system', 'newsite']
            + ['--out', str(out), '--no-check'],
            capture_output=True,
            text=True,
            cwd=PROJECT,
            env=env,
            timeout=900,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        said = [
            line
            for line in proc.stdout.splitlines()
            if line.startswith('compute: found')
        ]
        assert len(said) == 1, proc.stdout
        assert said[0].startswith(
            'compute: found hpcc (/usr/bin/hpcc), NetPIPE (/usr/bin/NPopenmpi); '
            'not found: OSU, IMB, NPB'
        ), said
        assert 'benchmark features: gnu-openmpi +hpcc +netpipe\n' in proc.stdout
        config = out / 'site_configs' / 'newsite.py'
        text = config.read_text()
        assert "extra_features=['hpcc', 'netpipe']" in text, text
        # The login node and the compute nodes Slurm lists (n1, n2).
        assert "'^n\\\\d+(\\\\.|$)'" in text, text
        listed = reframe_on(
            config, 'newsite', '-n', 'HPCC|NetPIPE', '-l', cwd=tmp_path, env=env
        )
        shown = listed.stdout + listed.stderr
        assert listed.returncode == 0, shown
        assert '- HPCCCheck' in shown and '- NetPIPECheck' in shown, shown
        # Whole nodes: the job script asks Slurm for them (a box node has
        # one core: HPCC runs one rank on each of two).
        dry = reframe_on(
            config, 'newsite', '-n', '^HPCCCheck', '-S', 'HPCCCheck.num_nodes=2',
            '--dry-run', '--prefix', tmp_path / 'dry', cwd=tmp_path, env=env,
        )  # fmt: skip
        assert dry.returncode == 0, dry.stdout + dry.stderr
        (script,) = (tmp_path / 'dry').glob('stage/**/rfm_job.sh')
        assert '#SBATCH --exclusive' in script.read_text()


def reframe_on(config, system, *args, cwd, env=None):
    """Plain ReFrame with *config* over the project's checks, from *cwd*."""
    return subprocess.run(
        [REFRAME, '-C', str(config), '-c', os.path.join(PROJECT, 'reframe_checks')]
        + ['--system', system, '--nocolor', *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
        check=False,
    )


def _slurm_config(exclusive):
    """A Slurm system of 2-core nodes (no Slurm needed: a dry run writes the
    job scripts only)."""
    extras = {'mem_per_node': 2**30}
    if exclusive is not None:
        extras['exclusive'] = exclusive
    node = {'num_cpus': 2, 'num_cpus_per_core': 1, 'num_sockets': 1}
    node['num_cpus_per_socket'] = 2
    partition = f"'processor': {node!r}, 'extras': {extras!r},"
    return (
        NO_HPCC.replace("'scheduler': 'local'", "'scheduler': 'slurm'")
        .replace("'launcher': 'mpirun',", f"'launcher': 'srun', {partition}")
        .replace(
            "common['gnu_mpich'](", "common['gnu_mpich'](extra_features=['hpcc'], "
        )
    )


@pytest.mark.integration
@pytest.mark.parametrize('exclusive', [None, False])
def test_cluster_jobs_ask_for_whole_nodes_unless_the_partition_says(
    tmp_path, exclusive
):
    config = tmp_path / 'slurmy.py'
    config.write_text(_slurm_config(exclusive))
    proc = reframe_on(
        config, 'nohpcc', '-n', '^HPCCCheck$', '--dry-run',
        '--prefix', tmp_path / 'dry', cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (script,) = (tmp_path / 'dry').glob('stage/**/rfm_job.sh')
    assert ('#SBATCH --exclusive' in script.read_text()) == (exclusive is None)


def test_hostnames_match_the_login_node_and_every_compute_node():
    patterns = siteinit.hostname_patterns('login-1', ['n001', 'n002', 'n117', 'gpu.a'])
    assert patterns == [r'^login\-1(\.|$)', r'^n\d+(\.|$)', r'^gpu\.a(\.|$)']

    def matched(host):
        return any(re.match(p, host) for p in patterns)

    for host in ('login-1', 'login-1.cluster.org', 'n001', 'n9999', 'gpu.a'):
        assert matched(host), host
    for host in ('login-2', 'n001x', 'gpuxa', 'vm'):
        assert not matched(host), host


def test_what_the_nodes_and_modules_have_becomes_features_reframe_reads(tmp_path):
    on_node = benchfind.parse(
        'found hpcc /usr/bin/hpcc libmpi.so.40\n'
        'found NPopenmpi /usr/bin/NPopenmpi libmpi.so.40\n'
        'found IMB-MPI1 /opt/imb/IMB-MPI1 libmpich.so.12\n'
    )
    assert benchfind.said('compute', on_node).startswith(
        'compute: found hpcc (/usr/bin/hpcc), NetPIPE (/usr/bin/NPopenmpi), IMB '
        '(/opt/imb/IMB-MPI1); not found: OSU, NPB'
    )
    environs = [
        sitefacts.Environ('gnu-openmpi', 'openmpi', 'debian'),
        sitefacts.Environ('gnu-mpich', 'mpich', 'debian'),
        sitefacts.Environ(
            'gcc-openmpi-5', 'openmpi', 'modules', modules=['openmpi/5.0.8']
        ),
    ]
    modules = benchfind.in_modules(['osu-micro-benchmarks/7.4-openmpi', 'npb/3.4.3'])
    notes = benchfind.enable({'compute': on_node}, environs, modules)
    assert notes == []
    part = slurm.Partition(
        name='compute', nodes=['n1'], cpus=2, sockets=1, cores_per_socket=2,
        threads_per_core=1, mem_mb=1024, features=[], gres=None, default=True,
    )  # fmt: skip
    source = siteinit.config_source(
        'gen', [part], 'nomod', environs, ['pmix', 'pmi2'], {'compute': {}}
    )
    path = tmp_path / 'gen.py'
    path.write_text(source)
    proc = reframe_on(path, 'gen', '--show-config', cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = json.loads(proc.stdout[proc.stdout.index('{') :])
    envs = {e['name']: e for e in shown['environments']}
    assert {'hpcc', 'netpipe'} <= set(envs['gnu-openmpi']['features'])
    assert 'imb' in envs['gnu-mpich']['features']
    assert 'osu' in envs['gcc-openmpi-5']['features']
    assert envs['gcc-openmpi-5']['modules'][-1] == 'osu-micro-benchmarks/7.4-openmpi'
    # The only module environment, so NPB of an MPI not told is its.
    assert envs['gcc-openmpi-5']['extras']['npb_module'] == 'npb/3.4.3'
    assert shown['systems'][0]['partitions'][0]['extras']['exclusive'] is True


@pytest.mark.integration
def test_hpcc_on_one_core_nodes_says_how_to_run_it(tmp_path):
    """Slurm refuses two ranks on a one-core node; the check says what runs
    there (one rank per node on two nodes) instead of a refused sbatch."""
    config = tmp_path / 'onecore.py'
    config.write_text(
        _slurm_config(None)
        .replace("'num_cpus': 2", "'num_cpus': 1")
        .replace("'num_cpus_per_socket': 2", "'num_cpus_per_socket': 1")
    )
    proc = reframe_on(
        config, 'nohpcc', '-n', '^HPCCCheck$', '--dry-run',
        '--prefix', tmp_path / 'dry', cwd=tmp_path,
    )  # fmt: skip
    shown = proc.stdout + proc.stderr
    assert 'HPCC needs two ranks for PingPong; give -S HPCCCheck.num_nodes=2' in shown
    assert not list((tmp_path / 'dry').glob('stage/**/rfm_job.sh')), shown

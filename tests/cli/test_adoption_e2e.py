"""A centre's first week, step by step as README's "Adopting clusterbench
at your centre" and docs/adoption.md say, as an unprivileged user on the
test cluster (issues 30, 41).

Root builds nothing for the centre: the user builds the wheel with `make
dist` (no set-up profile, no apt-get), also installs from a read-only
checkout; root only makes the shared venv (read-only to the user) from that
wheel and brings up the 2-node test cluster. Then, as the user, in the
centre's own directory: `clusterbench site init` with an access option
(it finds Debian's hpcc and NetPIPE on the nodes and enables them), the
TODOs completed, `spack-envs`, README step 3's command as README prints it
(HPL, DGEMM, STREAM and MPI latency measured by HPCC on the generated
config, every figure `no reference`), README step 4's `baseline` (three
sessions), `references check`, and step 3's command again, judged by that
baseline; the CG check built and run from the read-only venv; results,
database and perflogs under the centre's results/, nothing in the venv; and
a read-only location that fails loudly.

Tiny work: HPCC at N=1152, the fabric program's all-pairs run over the two
nodes and the node battery with one short sample, in one environment
(gnu-openmpi; MPICH 4.0.2 can hang in MPI_Finalize on the box, see
site_configs/box.py).
"""

import glob
import os
import re
import shlex
import shutil
import tempfile

import adoption
import pytest
from conftest import PROJECT

from clusterbench.testcluster import testing

REASON = testing.unavailable() or adoption.unavailable()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(REASON is not None, reason=REASON or ''),
]

SYSTEM = 'adopt'
ACCESS = '--access=--qos=normal'
#: The runs of the week: the fabric and the node battery, tiny, measured
#: but not judged for their conditions (the test shares the machine; a
#: DISTURBED figure never feeds a reference).
SELECT = (
    '-n',
    '^FabricCheck$',
    '-n',
    '^NodeProbeCheck$',
    '-n',
    '^HPCCCheck$',
    '-S',
    'hpl_n=1152',
    '-S',
    'hpl_nb=96',
    # A box node has one core: HPCC's PingPong pairs need two ranks, one per
    # node, and their latency is then the link's.
    '-S',
    'HPCCCheck.num_nodes=2',
    '-p',
    '^gnu-openmpi$',
    '-S',
    'samples=1',
    '-S',
    'stream_reps=2',
    '-S',
    'dgemm_n=256',
    '-S',
    'judge_conditions=false',
    '-S',
    'probe_host=false',
)
#: What the centre decides for the TODO site init cannot read: what every
#: link of its fabric must do.
ACCEPTANCE = (
    "'acceptance': {'min_spread': 0.15, 'link_bandwidth_min_mbs': 50.0, "
    "'link_latency_max_us': 500.0, 'link_stall_max': 0.01},"
)


def readme_step(number):
    """The command of README's adoption step *number* (its ``sh`` block,
    continuation lines joined), for the system of this test."""
    text = open(os.path.join(PROJECT, 'README.md')).read()
    section = text[text.index('## Adopting clusterbench at your centre') :]
    step = section[section.index(f'\n{number}. **') :]
    block = re.search(r'```sh\n(.*?)```', step, re.S).group(1)
    command = re.sub(r'\\\n\s*', '', block).strip()
    assert '\n' not in command, command
    return command.replace('mycluster', SYSTEM)


def complete_acceptance_todo(config):
    """Replace the ``# TODO: acceptance: ...`` comment (and its wrapped lines)
    with the centre's decision."""
    text = config.read_text()
    block = re.compile(r'^( *)# TODO: acceptance:.*\n(?:\1#   .*\n)*', re.M)
    assert block.search(text), text
    config.write_text(block.sub(lambda m: f'{m.group(1)}{ACCEPTANCE}\n', text))


@pytest.fixture(scope='module')
def week():
    base = adoption.world_readable_dir(tempfile.mkdtemp(prefix='clusterbench-week-'))
    try:
        yield _first_week(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _first_week(base):
    steps = {}
    home = adoption.owned_by_user(os.path.join(base, 'home'))
    # 1. Install: the wheel built by the user, without the test profile.
    checkout = adoption.copy_checkout(os.path.join(base, 'checkout'))
    adoption.owned_by_user(checkout)
    steps['dist'] = adoption.as_user(['make', 'dist'], checkout, home)
    (wheel,) = glob.glob(os.path.join(checkout, 'dist', 'clusterbench-*.whl'))
    # pip install /path/to/checkout, the checkout not the user's to write.
    readonly_checkout = adoption.copy_checkout(os.path.join(base, 'readonly-checkout'))
    own = adoption.owned_by_user(os.path.join(base, 'own'))
    user_venv = os.path.join(own, 'venv')
    adoption.as_user(
        # Debian's setuptools for the build: the test has no index to fetch it.
        [adoption.SYSTEM_PYTHON, '-m', 'venv', '--without-pip']
        + ['--system-site-packages', user_venv],
        own,
        home,
    )
    steps['pip-readonly'] = adoption.as_user(
        [adoption.SYSTEM_PYTHON, '-m', 'pip', '--python', f'{user_venv}/bin/python']
        + ['install', '--no-deps', '--no-index', '--no-build-isolation']
        + ['--no-cache-dir', readonly_checkout],
        own,
        home,
    )  # fmt: skip
    # The shared install: root's venv, read-only to the user.
    shared = adoption.shared_venv(os.path.join(base, 'shared-venv'), wheel)
    steps['venv-before'] = adoption.tree(shared)
    centre = adoption.owned_by_user(os.path.join(base, 'centre'))
    locks = adoption.owned_by_user(os.path.join(base, 'locks'))
    path = f'{shared}/bin:{adoption.SYSTEM_PATH}'
    with testing.cluster_up(2) as state:
        env = {
            **testing.POLL_ENV,
            'SLURM_CONF': state.slurm_conf,
            'CLUSTERBENCH_LOCK_DIR': locks,
        }

        def user(*cmd, cwd=centre, more=None):
            return adoption.as_user(cmd, cwd, home, path, {**env, **(more or {})})

        steps['paths'] = user('clusterbench', 'paths')
        # 2. The site config, from the cluster, with the centre's access option.
        steps['init'] = user('clusterbench', 'site', 'init', '--system', SYSTEM, ACCESS)
        config = os.path.join(centre, 'site_configs', f'{SYSTEM}.py')
        steps['config'] = open(config).read()
        steps['spack.yaml'] = open(
            os.path.join(centre, 'spack_envs', SYSTEM, 'compute', 'spack.yaml')
        ).read()
        # 3. The TODOs completed; the Spack environment checked; first runs.
        import pathlib

        complete_acceptance_todo(pathlib.Path(config))
        steps['spack-envs'] = user('clusterbench', 'spack-envs')
        # README step 3, as README prints it (the tiny selection after `--`).
        first = readme_step(3)
        steps['runs'] = [user('bash', '-c', f'{first} -- {shlex.join(SELECT)}')]
        # README step 4 in the same directory: three sessions, not spaced.
        baseline = readme_step(4).replace('--system', '--spacing 0 --system')
        steps['baseline'] = user('bash', '-c', f'{baseline} -- {shlex.join(SELECT)}')
        steps['reports'] = sorted(
            glob.glob(os.path.join(centre, 'results', SYSTEM, '*', 'report.json'))
        )
        steps['refs'] = adoption.tree(os.path.join(centre, 'reference_data'))
        steps['check'] = user('clusterbench', 'references', 'check')
        steps['paths-references'] = user('clusterbench', 'paths', 'references')
        # Step 3's command again, as it is: judged by the baseline.
        steps['fourth'] = user(
            'bash', '-c', f'{first} -v --confirm 0 -- {shlex.join(SELECT)}'
        )
        # The CG check: built from the read-only venv's sources and run.
        steps['cg'] = user(
            'clusterbench', 'run', '--system', SYSTEM, '--format', 'json', '--',
            '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
            '-p', '^gnu-openmpi$', '-S', 'problem_class=S',
            '-S', 'judge_conditions=false', '-S', 'probe_host=false',
        )  # fmt: skip
        # A location the user cannot write: fails loudly, nothing lost.
        readonly = adoption.world_readable_dir(os.path.join(base, 'readonly'))
        steps['readonly-run'] = user(
            'clusterbench', 'run', '--system', SYSTEM, '--config', config,
            '--', *SELECT, cwd=readonly,
        )  # fmt: skip
        steps['readonly-reframe'] = user(
            'reframe', '-C', config, '-c', os.path.join(
                user('clusterbench', 'paths', 'checks').stdout.strip(), 'fabric.py'),
            '-n', '^FabricCheck$', '-p', '^gnu-openmpi$', '-r',
            cwd=readonly,
        )  # fmt: skip
        steps['not-stored'] = user(
            'clusterbench', 'run', '--system', SYSTEM,
            '--', '-n', '^FabricCheck$', '-p', '^gnu-openmpi$',
            more={'RFM_SQLITE_DB_FILE': os.path.join(readonly, 'results.db')},
        )  # fmt: skip
    steps['venv-after'] = adoption.tree(shared)
    steps['centre'] = adoption.tree(centre)
    steps['readonly-tree'] = adoption.tree(readonly)
    steps['kind'] = _host_kind()
    steps['base'] = base
    return steps


def _host_kind():
    from clusterbench.machine.hwinfo import cpu_kind_of_file

    return cpu_kind_of_file()


def said(proc):
    return f'exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-3000:]}'


def test_the_wheel_is_built_without_the_test_profile(week):
    dist = week['dist']
    assert dist.returncode == 0, said(dist)
    assert 'setup.sh' not in dist.stdout + dist.stderr
    assert 'apt-get' not in dist.stdout + dist.stderr


def test_pip_installs_a_checkout_the_user_cannot_write(week):
    assert week['pip-readonly'].returncode == 0, said(week['pip-readonly'])


def test_the_shared_venv_is_used_and_never_written(week):
    assert '(packaged copy)' in week['paths'].stdout, said(week['paths'])
    assert week['venv-after'] == week['venv-before']


def test_site_init_writes_what_a_cluster_needs(week):
    init, config = week['init'], week['config']
    assert init.returncode == 0, said(init)
    assert f"'cpu_kind': '{week['kind']}'" in config
    assert "'access': ['--partition=compute', '--qos=normal']" in config
    assert "'max_jobs': 2" in config
    assert "'logging': common['logging']()" in config
    # The box's nodes are one host: MPI held to the network between them.
    assert "['OMPI_MCA_btl', 'tcp,self']" in config
    assert "['UCX_TLS', 'tcp,self']" in config
    # The CLI and the file header count the same TODOs.
    todos = config.count('# TODO:')
    assert f'{todos} fact(s) could not be determined' in config
    assert f'{todos} TODO(s) in ' in init.stdout
    # Its validating run passed on both nodes.
    assert ', 0 FAILED\n' in init.stdout, said(init)


def test_the_generated_spack_environment_passes(week):
    text = week['spack.yaml']
    assert 'site-packages' not in text and '  - ../../common/benchmarks.yaml' in text
    assert 'require: [gcc@' in text and 'require: [target=x86_64' in text
    assert "require: ['@4.1.4']" in text  # Debian 12's Open MPI, found
    envs = week['spack-envs']
    assert envs.returncode == 0, said(envs)
    assert '1 site configs and their Spack environments agree' in envs.stdout


def _figures(report):
    """{(check, figure): value} of every figure a session recorded."""
    import json

    cases = json.load(open(report))['runs'][0]['testcases']
    return {
        (case['name'].split()[0], key.split(':')[-1]): perf[0]
        for case in cases
        for key, perf in (case.get('perfvalues') or {}).items()
    }


def test_the_first_run_measures_hpl_dgemm_stream_and_mpi_latency(week):
    (first,) = week['runs']
    assert first.returncode in (0, 3), said(first)
    assert 'no reference' in first.stdout
    # Every figure is new: the run names the command that makes them, with
    # the run's own options.
    assert f'make them with: clusterbench baseline --system {SYSTEM}' in first.stdout
    assert 'no environment of' not in first.stdout, said(first)
    measured = _figures(week['reports'][0])
    for figure in ('hpl', 'dgemm_star', 'stream_star_triad', 'pingpong_latency_min'):
        assert ('HPCCCheck', figure) in measured, sorted(measured)
        assert measured['HPCCCheck', figure] > 0


def test_the_baseline_of_three_sessions_writes_the_references_in_use(week):
    baseline = week['baseline']
    assert baseline.returncode == 0, said(baseline)
    assert len(week['reports']) >= 4  # the first run and the baseline's three
    refs = week['refs']
    for name in ('fabric.yaml', 'nodeprobe.yaml', 'hpcc.yaml'):
        assert f'{SYSTEM}/{name}' in refs, refs
    assert any(f.startswith(f'{SYSTEM}/provenance/') for f in refs), refs
    fabric = open(
        os.path.join(week['base'], 'centre', 'reference_data', SYSTEM, 'fabric.yaml')
    )
    if 'msgrate' in _context_figures(baseline):
        # Three sessions of a loaded machine spread wider than ±100 %: the
        # message rate is context (issue 40), and the baseline said so.
        said_so = [
            line
            for line in baseline.stdout.splitlines()
            if 'msgrate' in line and 'context only' in line
        ]
        assert any('Mmsg/s' in line for line in said_so), baseline.stdout
    else:
        assert 'Mmsg/s' in fabric.read()
    assert week['check'].returncode == 0, said(week['check'])
    assert week['paths-references'].stdout == 'reference_data\n', said(
        week['paths-references']
    )


def _context_figures(update):
    """The figures `references update` wrote as context only."""
    return {
        line.split(':', 1)[0].split()[-1]
        for line in update.stdout.splitlines()
        if 'context only' in line
    }


def test_the_fourth_run_is_judged_by_them(week):
    fourth = week['fourth']
    assert fourth.returncode in (0, 1, 3), said(fourth)
    assert 'unknown unit' not in fourth.stdout + fourth.stderr
    table = fourth.stdout[fourth.stdout.index('Results: ') :]
    # A figure whose three sessions spread wider than ±100 % (a loaded
    # machine's message rate) is written as context, never a band (issue
    # 40): `no reference` there, and the update said so.
    assert table.startswith('Results: ') and fourth.stdout.startswith(
        'references: reference_data ('
    ), fourth.stdout[:300]
    context = _context_figures(week['baseline'])
    for figure in (
        'msgrate', 'latency', 'bandwidth', 'stream_triad', 'dgemm', 'hpl',
        'stream_star_triad', 'pingpong_latency_min',
    ):  # fmt: skip
        rows = [line for line in table.splitlines() if f' {figure} ' in line]
        assert rows, (figure, table)
        if figure not in context:
            assert not any('no reference' in r for r in rows), (figure, table)


def test_results_database_and_perflogs_where_the_docs_say(week):
    centre = week['centre']
    assert 'results/results.db' in centre
    logs = [f for f in centre if f.startswith(f'results/perflogs/{SYSTEM}/compute/')]
    assert logs, centre
    sessions = {f.split('/')[2] for f in centre if f.startswith(f'results/{SYSTEM}/')}
    assert len(sessions) >= 5  # site init's, three, the fourth
    for run in [*week['runs'], week['baseline'], week['fourth'], week['cg']]:
        assert 'failed to store' not in run.stdout


def test_the_read_only_venv_builds_and_runs_the_cg_check(week):
    import json

    cg = week['cg']
    assert cg.returncode in (0, 3), said(cg)
    rows = [r for r in json.loads(cg.stdout) if r['test'].startswith('CGSolverCheck')]
    assert rows, cg.stdout[-3000:]
    assert all(r['verdict']['kind'] != 'FAILED' for r in rows), rows
    (gflops,) = [r for r in rows if r['variable'] == 'gflops']
    assert gflops['value'] > 0, gflops


def test_a_read_only_location_fails_loudly(week):
    run = week['readonly-run']
    assert run.returncode == 2, said(run)
    assert (
        run.stderr == 'clusterbench: error: results: not writable (permission denied)\n'
    )
    plain = week['readonly-reframe']
    assert plain.returncode != 0, said(plain)
    # ReFrame's own one line: its stage and output go under the results root
    # too (it makes them before any test; clusterbench adds nothing there).
    assert "Permission denied: '" in plain.stdout, said(plain)
    assert "/readonly/results'" in plain.stdout, said(plain)
    assert week['readonly-tree'] == []
    lost = week['not-stored']
    assert lost.returncode == 1, said(lost)
    assert 'not stored in the results database: ' in lost.stdout

"""One rule for the references in use (issue 41), in a centre's directory
running from the packaged copy, as a wheel installs it:

``--references DIR``, else ``$RFM_REFERENCE_PREFIX``, else ``reference_data/``
of the current directory when it holds a reference file of some system, else
clusterbench's own; every command says which, and why, in the same line; the
README's step 3 run, repeated after step 4's baseline, is judged by it.

The packaged install is the package and its ``share/`` copied beside each
other, outside the checkout (what a wheel installs into site-packages),
run through a ``clusterbench`` on PATH: ``clusterbench paths`` says
``(packaged copy)`` there.
"""

import json
import os
import shlex
import shutil
import sys

import pytest
from conftest import FIXTURES, PROJECT
from rfm import captured, tool

from clusterbench.core import paths as corepaths

#: The README's step 3, literally (the system is the centre's).
STEP3 = (
    'clusterbench run --system mycluster --config site_configs/mycluster.py '
    '--checks "$(clusterbench paths checks)" --references '
    '"$(clusterbench paths references)"'
)
#: The ReFrame options of the test's runs: one quick CG solver case, its
#: conditions measured but not judged (a shared machine must not turn it
#: DISTURBED: this test is about which references judge it).
TINY = [
    '-n', 'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
    '-p', 'gnu-openmpi', '-S', 'problem_class=S',
    '-S', 'judge_conditions=false', '-S', 'probe_host=false',
]  # fmt: skip
SESSION = os.path.join(FIXTURES, 'sessions', 'AMD-25-1', 'report.json')

#: A centre's site config: the embedded `local`, under the centre's name.
MYCLUSTER = """\
import copy
import runpy

from clusterbench.core import paths

_local = runpy.run_path(paths.site_config('local.py'))['site_configuration']
site_configuration = copy.deepcopy(_local)
site_configuration['systems'][0]['name'] = 'mycluster'
for _env in site_configuration['environments']:
    _env['target_systems'] = ['mycluster']
"""


@pytest.fixture(scope='module')
def packaged(tmp_path_factory):
    """(environment, share directory) of clusterbench installed as a wheel
    installs it: the package with its share/ in a directory of its own."""
    site = tmp_path_factory.mktemp('site-packages')
    skip = shutil.ignore_patterns('__pycache__', 'share', '*.egg-info')
    shutil.copytree(os.path.join(PROJECT, 'clusterbench'), site / 'clusterbench',
                    ignore=skip)  # fmt: skip
    share = site / 'clusterbench' / 'share'
    for name in corepaths.DIRECTORIES.values():
        shutil.copytree(os.path.join(PROJECT, name), share / name, ignore=skip)
    bin_dir = site / 'bin'
    bin_dir.mkdir()
    (bin_dir / 'clusterbench').write_text(
        f'#!/bin/sh\nexec {sys.executable} -m clusterbench.cli "$@"\n'
    )
    (bin_dir / 'clusterbench').chmod(0o755)
    env = {
        'PYTHONPATH': str(site),
        'PATH': f'{bin_dir}:{os.environ["PATH"]}',
        'RFM_REFERENCE_PREFIX': None,
    }
    return env, str(share)


def centre(tmp_path):
    here = tmp_path / 'centre'
    (here / 'site_configs').mkdir(parents=True)
    (here / 'site_configs' / 'mycluster.py').write_text(MYCLUSTER)
    return here


def shell(packaged, here, command, timeout=900):
    env = {
        **packaged[0],
        'CLUSTERBENCH_LOCK_DIR': str(here),
        'RFM_SQLITE_DB_FILE': None,
        'CLUSTERBENCH_PERFLOGDIR': None,
    }
    return captured(['bash', '-c', command], env=env, cwd=here, timeout=timeout)


def first_references_line(text):
    return next(line for line in text.splitlines() if line.startswith('references: '))


def test_it_runs_as_the_packaged_copy(packaged, tmp_path):
    done = shell(packaged, tmp_path, 'clusterbench paths')
    assert done.returncode == 0, done.stderr
    assert '(packaged copy)' in done.stdout
    assert done.stdout.splitlines()[0].split()[1] == packaged[1]


def test_every_command_names_the_same_references_and_why(packaged, tmp_path):
    here = centre(tmp_path)
    own = os.path.join(packaged[1], 'reference_data')

    def said():
        """What `paths references`, `paths`, `references show` and `check`
        and `compare --references "$(clusterbench paths references)"` say."""
        found = {}
        path = shell(packaged, here, 'clusterbench paths references')
        assert path.returncode == 0, path.stderr
        found['paths references'] = path.stdout.strip()
        table = shell(packaged, here, 'clusterbench paths').stdout.splitlines()
        (row,) = [line for line in table if line.startswith('references ')]
        found['paths'] = 'references: ' + row.split(None, 1)[1].replace('  (', ' (')
        for command in (
            'references show',
            'references check',
            'compare --references "$(clusterbench paths references)" ' + SESSION,
        ):
            done = shell(packaged, here, f'clusterbench {command}')
            assert 'Traceback' not in done.stderr, done.stderr
            # Named by the option, the rule's reason is said after it.
            shown = first_references_line(done.stdout)
            found[command] = shown.replace(' (--references, ', ' (')
            assert shown != found[command] or 'compare' not in command, shown
        return found

    nothing_here = said()
    assert nothing_here['paths references'] == own
    line = (
        f"references: {own} (clusterbench's own, packaged copy: no "
        'reference_data/ here)'
    )
    assert set(nothing_here.values()) - {own} == {line}, nothing_here

    # A refused baseline, an interrupted copy: an empty reference_data/ hides
    # nothing, and says so.
    (here / 'reference_data').mkdir()
    empty = said()
    line = (
        f"references: {own} (clusterbench's own, packaged copy: reference_data/ "
        'here holds no reference file)'
    )
    assert set(empty.values()) - {own} == {line}, empty
    assert empty['paths references'] == own

    mine = here / 'reference_data' / 'mycluster'
    mine.mkdir()
    shutil.copy(os.path.join(own, 'local', 'hpcc.yaml'), mine / 'hpcc.yaml')
    centres = said()
    assert centres['paths references'] == 'reference_data'
    line = (
        "references: reference_data (the current directory's: references of mycluster)"
    )
    assert set(centres.values()) - {'reference_data'} == {line}, centres

    # The option and the variable win, and say so.
    named = shell(packaged, here, f'clusterbench references show --references {own}')
    assert first_references_line(named.stdout) == f'references: {own} (--references)'
    by_env = shell(
        packaged, here, f'RFM_REFERENCE_PREFIX={own} clusterbench references show'
    )
    assert first_references_line(by_env.stdout) == (
        f'references: {own} ($RFM_REFERENCE_PREFIX)'
    )
    # compare without a directory judges as ReFrame did, and says how else.
    recorded = shell(packaged, here, f'clusterbench compare {SESSION}')
    assert first_references_line(recorded.stdout) == (
        'references: as recorded in the report by ReFrame (no --references or '
        '$RFM_REFERENCE_PREFIX)'
    )


def test_a_refused_baseline_leaves_no_reference_directory(packaged, tmp_path):
    here = centre(tmp_path)
    done = shell(
        packaged,
        here,
        'clusterbench baseline --system mycluster --sessions 1 --spacing 0 '
        "-- -n '^NoSuchCheck$'",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'NoSuchCheck' in done.stderr
    assert not (here / 'reference_data').exists()


def _disturbed_copies(tmp_path, count, why="ranks' CPU share 40 %"):
    """*count* sessions of AMD-25-1, every test case of each DISTURBED."""
    with open(SESSION) as f:
        data = json.load(f)
    found = []
    for number in range(count):
        data['session_info']['uuid'] = f'disturbed-{number}'
        for run in data['runs']:
            for case in run['testcases']:
                if not case.get('fixture'):
                    case['disturbed'] = why
        folder = tmp_path / 'results' / 'local' / f'2026112{number}T000000'
        folder.mkdir(parents=True)
        (folder / 'report.json').write_text(json.dumps(data))
        found.append(str(folder))
    return found


def test_a_baseline_of_disturbed_sessions_says_what_to_do(packaged, tmp_path):
    here = centre(tmp_path)
    sessions = _disturbed_copies(here, 3)
    done = shell(
        packaged,
        here,
        'clusterbench baseline --system local --sessions 0 --from '
        + ' '.join(sessions)
        + " -- -n 'HPCC|CGSolver'",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'baseline: left out ' in done.stdout
    assert "DISTURBED samples of 3 sessions: ranks' CPU share" in done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        'clusterbench: error: baseline: every figure of the 3 sessions was DISTURBED'
    ), line
    assert "(ranks' CPU share" in line
    # The next step, with this baseline's own options.
    assert (
        "`clusterbench baseline --system local --wait-quiet 120 -- -n 'HPCC|CGSolver'`"
    ) in line
    assert '-S judge_conditions=false' in line
    assert 'nothing was written' in line
    assert not (here / 'reference_data').exists()


def test_a_busy_machine_still_shows_how_to_make_references(packaged, tmp_path):
    here = centre(tmp_path)
    (session,) = _disturbed_copies(here, 1)
    refs = os.path.join(packaged[1], 'reference_data')
    done = shell(packaged, here, f'clusterbench compare {session} --references {refs}')
    assert done.returncode in (0, 3), done.stdout + done.stderr
    assert 'DISTURBED' in done.stdout
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith('no references')]
    # The option is the default here (the packaged copy): left out, so that
    # the baseline writes here, never into the installed package.
    assert line == (
        f'no references for AMD-25-1 in {refs} (there are for AMD-25-17, '
        'Intel-6-207): make them with: clusterbench baseline --system local'
    )


def test_a_refusal_repeats_the_baselines_options(packaged, tmp_path):
    here = centre(tmp_path)
    (one,) = _disturbed_copies(here, 1, why='')
    done = shell(
        packaged,
        here,
        f'clusterbench baseline --system local --references my\\ refs --sessions 0 '
        f"--from {one} -- -n 'HPCC|CGSolver' -S problem_class=S",
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "record more with `clusterbench baseline --system local --references 'my refs' "
        f"--sessions 2 --from {one} -- -n 'HPCC|CGSolver' -S problem_class=S`"
    ) in done.stderr
    assert not (here / 'my refs').exists()


@pytest.mark.integration
def test_readme_step_3_after_step_4_is_judged_by_the_baseline(packaged, tmp_path):
    here = centre(tmp_path)
    options = ' -- ' + shlex.join(TINY)
    first = shell(packaged, here, STEP3 + options)
    assert first.returncode in (0, 3), first.stdout[-3000:] + first.stderr
    own = os.path.join(packaged[1], 'reference_data')
    assert first_references_line(first.stdout) == (
        f"references: {own} (--references, clusterbench's own, packaged copy: no "
        'reference_data/ here)'
    )
    # The new machine's guidance: the command that makes its references,
    # with the run's options (those that are not the defaults).
    (line,) = [ln for ln in first.stdout.splitlines() if 'make them with: ' in ln]
    suggested = line.split('make them with: ', 1)[1]
    assert suggested == 'clusterbench baseline --system mycluster' + options
    # Followed literally (but for the five minutes between sessions).
    step4 = suggested.replace(' -- ', ' --spacing 0 -- ', 1)
    baseline = shell(packaged, here, step4, timeout=1800)
    assert baseline.returncode == 0, baseline.stdout[-3000:] + baseline.stderr
    written = here / 'reference_data' / 'mycluster' / 'cgsolver.yaml'
    assert f'wrote {os.path.relpath(written, here)}' in baseline.stdout
    # The CG solver's floor (14 %) is wider than the 10 % a regression must
    # show: said as `references check` says it.
    warned = [ln for ln in baseline.stdout.splitlines() if ln.startswith('warning: ')]
    check = shell(packaged, here, 'clusterbench references check')
    checked = [ln for ln in check.stdout.splitlines() if ln.startswith('warning: ')]
    assert warned and set(warned) <= set(checked), baseline.stdout
    # Step 3 again, literally: the centre's baseline judges it.
    again = shell(packaged, here, STEP3 + options)
    # A class-S solve takes about a millisecond, so its time can land outside
    # a band of three sessions (SLOWER, exit 1). What is tested is that the
    # baseline judged it: every figure has a reference and nothing failed.
    assert again.returncode in (0, 1, 3), again.stdout[-3000:] + again.stderr
    (summary,) = [ln for ln in again.stdout.splitlines() if ln.endswith(' FAILED')]
    assert ', 0 no reference, 0 FAILED' in summary, again.stdout[-3000:]
    assert first_references_line(again.stdout) == (
        "references: reference_data (--references, the current directory's: "
        'references of mycluster)'
    )
    assert 'make them with' not in again.stdout
    reports = (here / 'results' / 'mycluster').glob('*/report.json')
    report = max(reports, key=lambda path: path.stat().st_mtime)
    data = json.loads(report.read_text())
    (case,) = [c for c in data['runs'][0]['testcases'] if not c.get('fixture')]
    judged = {k.rsplit(':', 1)[1]: v[1] for k, v in case['perfvalues'].items()}
    assert judged['iterations'] not in (0, None), case['perfvalues']


def test_references_update_names_the_wide_bands_it_writes(packaged, tmp_path):
    here = centre(tmp_path)
    sessions = _disturbed_copies(here, 3, why='')
    done = shell(
        packaged,
        here,
        'clusterbench references update --write --from '
        + ' '.join(f'{s}/report.json' for s in sessions),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    warned = [ln for ln in done.stdout.splitlines() if ln.startswith('warning: ')]
    warned = [ln for ln in warned if not ln.startswith('warning: references update')]
    check = shell(packaged, here, 'clusterbench references check')
    checked = [ln for ln in check.stdout.splitlines() if ln.startswith('warning: ')]
    # Identical sessions: every band is its kind's floor, 13 % and more for
    # memory bandwidth, solvers and MPI bandwidth.
    assert warned and sorted(warned) == sorted(checked), done.stdout
    assert f'{len(warned)} figure(s) written with a tolerance above 10 %' in done.stdout


def test_paths_prints_what_the_commands_use(tmp_path):
    """After `site init`, a centre's directory has its own site_configs/ and
    spack_envs/: `paths` names those, as the commands read them."""
    (tmp_path / 'site_configs').mkdir()
    (tmp_path / 'spack_envs').mkdir()
    one = captured([tool('clusterbench'), 'paths', 'site_configs'], cwd=tmp_path)
    assert one.stdout == 'site_configs\n', one.stdout + one.stderr
    listed = captured([tool('clusterbench'), 'paths'], cwd=tmp_path).stdout
    assert "\nspack_envs    spack_envs  (the current directory's)\n" in listed, listed
    # Checks the directory does not have are the project's.
    assert f'\nchecks        {os.path.join(PROJECT, "reframe_checks")}\n' in listed

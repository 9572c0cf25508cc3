"""`clusterbench replay` on a hostile report: nothing it names is run, and
nothing outside the session directory is read (issue 22, item 1)."""

import csv
import io
import json
import os
import shutil

from rfm import clusterbench


def case(name, **fields):
    return {
        'name': name,
        'display_name': name,
        'system': 'local',
        'partition': 'default',
        'environ': 'gnu-openmpi',
        'fixture': False,
        'result': 'pass',
        'num_tasks': 2,
        **fields,
    }


def session(tmp_path, *cases):
    directory = tmp_path / 'session'
    directory.mkdir()
    report = {
        'session_info': {'uuid': 'u1', 'num_cases': len(cases)},
        'runs': [{'testcases': list(cases)}],
    }
    (directory / 'report.json').write_text(json.dumps(report))
    return directory


def victim(tmp_path):
    path = tmp_path / 'v'
    path.mkdir()
    (path / 'precious').write_text('keep me')
    (path / 'hpccoutf.txt').write_text('not read\n')
    return path


def replay_rows(result):
    """``test: verdict`` of each failed case (CSV: the verdicts unwrapped)."""
    assert 'Traceback' not in result.stdout + result.stderr
    rows = csv.DictReader(io.StringIO(result.stdout))
    return [
        f'{row["test"]}: {row["verdict"]}'
        for row in rows
        if row['verdict'].startswith('FAILED (')
    ]


def test_a_named_function_is_never_called_on_a_path(tmp_path):
    target = victim(tmp_path)
    directory = session(
        tmp_path,
        case('Evil', replay_parser='shutil:rmtree', outputdir=str(target)),
        case('HPCCCheck', replay_parser='shutil:rmtree', outputdir=str(target)),
    )
    result = clusterbench('replay', '--format', 'csv', str(directory))
    assert (target / 'precious').read_text() == 'keep me'
    rows = replay_rows(result)
    assert result.returncode == 1, result.stdout + result.stderr
    assert len(rows) == 2
    evil = next(r for r in rows if r.startswith('Evil'))
    assert "FAILED (replay): no replay parser for Evil (the report's " in evil
    assert "'shutil:rmtree' is not used)" in evil
    hpcc = next(r for r in rows if r.startswith('HPCCCheck'))
    assert f'not read: outputdir {target} is outside the session directory' in hpcc


def test_run_path_on_a_main_module_runs_nothing(tmp_path):
    marker = tmp_path / 'marker'
    code = tmp_path / 'code'
    code.mkdir()
    (code / '__main__.py').write_text(f'open({str(marker)!r}, "w").write("ran")\n')
    directory = session(
        tmp_path,
        case('Evil', replay_parser='runpy:run_path', outputdir=str(code)),
        case(
            'CGSolverCheck %stencil=7',
            replay_parser='runpy:run_path',
            stagedir=str(code),
            job_stdout='__main__.py',
        ),
    )
    result = clusterbench('replay', '--format', 'csv', str(directory))
    assert not marker.exists()
    rows = replay_rows(result)
    assert len(rows) == 2 and result.returncode == 1
    assert any("'runpy:run_path' is not used" in r for r in rows)
    assert any(f'stagedir {code} is outside the session directory' in r for r in rows)


def test_paths_escaping_the_session_by_name_or_link_are_not_read(tmp_path):
    outside = victim(tmp_path)
    directory = session(
        tmp_path,
        case('HPCCCheck', outputdir='link'),
        case('CGSolverCheck %stencil=27', outputdir='.', job_stdout='../v/precious'),
    )
    os.symlink(outside, directory / 'link')
    rows = replay_rows(clusterbench('replay', '--format', 'csv', str(directory)))
    assert len(rows) == 2
    assert all('is outside the session directory' in r for r in rows), rows
    assert not any('not read\n' in r or 'keep me' in r for r in rows)


def test_a_reference_file_outside_the_references_is_not_read(tmp_path, fixtures_dir):
    # A real, verified HPCC output (2 ranks) inside the session, but the
    # report points the reference look-up at a file elsewhere.
    directory = session(
        tmp_path,
        case('HPCCCheck', outputdir='out', reference_file='../../v/secret.yaml'),
    )
    (directory / 'out').mkdir()
    shutil.copy(
        os.path.join(fixtures_dir, 'hpcc', 'hpccoutf.N2000.1x2.txt'),
        directory / 'out' / 'hpccoutf.txt',
    )
    outside = tmp_path / 'v'
    outside.mkdir()
    (outside / 'secret.yaml').write_text('HPCCCheck: {"local:default": {}}\n')
    refs = tmp_path / 'refs'
    refs.mkdir()
    result = clusterbench(
        'replay', '--format', 'csv', str(directory), '--references', str(refs)
    )
    rows = replay_rows(result)
    assert len(rows) == 1
    assert "reference file '../../v/secret.yaml' is outside" in rows[0]
    # The same output with the reference file it should name: judged.
    report = json.loads((directory / 'report.json').read_text())
    report['runs'][0]['testcases'][0]['reference_file'] = 'hpcc.yaml'
    (directory / 'report.json').write_text(json.dumps(report))
    result = clusterbench(
        'replay', '--format', 'csv', str(directory), '--references', str(refs)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not replay_rows(result)
    assert ',hpl,' in result.stdout

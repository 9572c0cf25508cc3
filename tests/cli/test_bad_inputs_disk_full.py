"""Bad input class 10 (tests/references/test_bad_inputs.py): a full disk while writing.

A small tmpfs (the ``small_disk`` fixture of tests/conftest.py) is filled
so that what `references update --write`, `clusterbench run` and
`clusterbench report` write does not fit: each says so in one line, exit 2,
and every stored file is as it was.
"""

import os
import shutil
import subprocess

import pytest
from badinput import Store, assert_line, references_check
from conftest import PROJECT, fill
from rfm import tool
from test_reference_file_errors import TINY
from test_reftransaction import REFERENCES, run_report, update

pytestmark = pytest.mark.integration


# --- 10. disk full while writing results or references ---------------------


def test_10_disk_full_under_references_update_write(small_disk, tmp_path):
    refs = small_disk / 'refs'
    shutil.copytree(REFERENCES, refs)
    report = run_report(tmp_path / 'r.json', files=('hpcc',))
    fill(small_disk, leave=16384)  # room for hpcc.yaml, not for its provenance
    store = Store(tmp_path, refs)
    result = update(refs, report)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f'clusterbench: error: {refs}/local/provenance/hpcc.yaml: no '
        'space left on device; nothing was changed'
    ]
    store.assert_kept()
    check = references_check(refs)
    assert check.returncode == 0, check.stdout


def test_10_disk_full_under_run_results(small_disk, tmp_path):
    store = Store(tmp_path, results=small_disk / 'results')
    fill(small_disk, leave=0)
    rc, out = store.run(*TINY, checks='reframe_checks/hpcc.py')
    assert rc == 2, out
    session = f'{store.results}/local/{{STAMP}}'
    assert_line(
        out,
        f'clusterbench: error: {session}/report.json: not written: no space left on '
        f'device ({session})',
    )
    store.assert_kept(new_session=True)
    assert [p.parent for p in store.results.glob('local/*/report.json')] == [
        store.earlier
    ]


def test_10_disk_full_under_report_output(small_disk, tmp_path):
    store = Store(tmp_path)
    # The same report where there is room: how much its CSVs take (in tmpfs
    # pages), so that the small disk keeps room for them and not for the HTML.
    probe = tmp_path / 'probe' / 'r.html'
    probe.parent.mkdir()
    subprocess.run(
        [tool('clusterbench'), 'report', str(store.earlier), '-o', str(probe)],
        capture_output=True, text=True, cwd=PROJECT, timeout=300, check=True,
    )  # fmt: skip
    pages = sum(
        -(-p.stat().st_size // 4096) * 4096
        for p in (tmp_path / 'probe' / 'r-data').rglob('*')
    )
    assert probe.stat().st_size > 4 * 4096  # the HTML will not fit in the slack
    output = small_disk / 'r.html'
    output.write_text('the previous report')
    fill(small_disk, leave=pages + 2 * 4096)  # room for the CSVs, not the HTML
    result = subprocess.run(
        [tool('clusterbench'), 'report', str(store.earlier), '-o', str(output)],
        capture_output=True, text=True, cwd=PROJECT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert_line(
        result.stderr,
        f'clusterbench: error: {output}: cannot write: no space left on device',
    )
    assert sorted(os.listdir(small_disk)) == ['filler', 'r.html']
    assert output.read_text() == 'the previous report'
    store.assert_kept()

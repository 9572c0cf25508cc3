"""The bad-input matrix, round 4 (issue 39), `clusterbench site init`'s part:
`scontrol` output cut short (class 67), a cluster of 10,000 partitions
(class 68) and an `--out` the system cannot make (class 66).

As in tests/checks/test_bad_inputs_site.py, `scontrol`, `srun` and `module` are
small scripts on PATH printing what the cluster would (the test is about
reading a command's output), and the real `clusterbench site init` runs.
"""

import os
import signal
import subprocess

import pytest
from badinput import assert_line
from rfm import tool
from test_bad_inputs_site import fake_cluster, site_init, tree

pytestmark = pytest.mark.integration


# --- 67. scontrol output cut short --------------------------------------------

CUT_SHORT = {
    # The last line cut in the middle of its first key.
    'last-line-cut': (
        'partitions',
        'PartitionName=compute Nodes=n1\nPartitionNa\n',
        'scontrol show partition: record 2 has no PartitionName (output cut '
        "short?): 'PartitionNa'",
    ),
    # A record whose start was lost.
    'no-partition-name': (
        'partitions',
        'Nodes=n1 State=UP TotalCPUs=4\n',
        'scontrol show partition: record 1 has no PartitionName (output cut '
        "short?): 'Nodes=n1 State=UP TotalCPUs=4'",
    ),
    'node-cut': (
        'nodes',
        'NodeName=n1 CPUTot=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 '
        'RealMemory=8000 AvailableFeatures=ib Gres=(null)\nNodeNa\n',
        "scontrol show node: record 2 has no NodeName (output cut short?): 'NodeNa'",
    ),
}


@pytest.mark.parametrize('case', sorted(CUT_SHORT))
def test_67_site_init_on_scontrol_output_cut_short(tmp_path, case):
    name, text, line = CUT_SHORT[case]
    env = fake_cluster(tmp_path)
    (tmp_path / 'fake' / name).write_text(text)
    before = tree(tmp_path)
    proc = site_init(tmp_path, env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_line(proc.stderr, f'clusterbench: error: {line}')
    assert proc.stderr.count('\n') == 1
    assert 'Traceback' not in proc.stdout + proc.stderr
    # Nothing written, nothing run on a node.
    assert tree(tmp_path) == before
    assert not (tmp_path / 'out').exists()


def test_67_slurm_without_partitions_says_so(tmp_path):
    """What scontrol prints on a cluster without partitions is no record."""
    env = fake_cluster(tmp_path)
    (tmp_path / 'fake' / 'partitions').write_text('No partitions in the system\n')
    proc = site_init(tmp_path, env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == ['clusterbench: error: Slurm shows no partition']
    assert not (tmp_path / 'out').exists()


# --- 68. a cluster of 10,000 partitions -----------------------------------------


def test_68_ten_thousand_partitions_are_not_all_on_the_first_line(tmp_path):
    env = fake_cluster(tmp_path)
    (tmp_path / 'fake' / 'partitions').write_text(
        ''.join(f'PartitionName=p{n} Nodes=(null)\n' for n in range(10_000))
    )
    # Only the first line is the point: site init would then ask a node of
    # each partition (20,000 fake sruns); it is stopped once it said it.
    proc = subprocess.Popen(
        [tool('clusterbench'), 'site', 'init', '--system', 'newsite',
         '--out', str(tmp_path / 'out'), '--no-check'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, **env}, start_new_session=True,
    )  # fmt: skip
    try:
        first = proc.stdout.readline()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=300)
    assert first == (
        '10,000 partition(s): p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, '
        '... and 9,990 more\n'
    )


def test_68_a_few_partitions_are_all_named(tmp_path):
    env = fake_cluster(tmp_path)
    (tmp_path / 'fake' / 'partitions').write_text(
        ''.join(f'PartitionName=p{n} Nodes=n1\n' for n in range(3))
    )
    proc = site_init(tmp_path, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == '3 partition(s): p0, p1, p2'


# --- 66. an --out the system cannot make ---------------------------------------


def _shown(path):
    path = str(path)
    return path if len(path) <= 200 else f'{path[:100]}...{path[-60:]}'


def _config(out):
    return out / 'site_configs' / 'newsite.py'


def _under_a_file(tmp_path):
    (tmp_path / 'file.txt').write_text('a file\n')
    out = tmp_path / 'file.txt' / 'out'
    return out, f'{_config(out)}: not a directory ({tmp_path / "file.txt"} is a file)'


def _long_name(tmp_path):
    out = tmp_path / ('x' * 300)
    return out, (
        f'{_shown(_config(out))}: file name too long (300 bytes in one name, '
        f'at most 255)'
    )


def _long_path(tmp_path):
    out = tmp_path.joinpath(*['d' * 200] * 21)
    size = len(os.fsencode(str(_config(out))))
    return out, f'{_shown(_config(out))}: path too long ({size} bytes, at most 4095)'


BAD_OUT = {
    'under-a-file': _under_a_file,
    'long-name': _long_name,
    'long-path': _long_path,
}


@pytest.mark.parametrize('bad', sorted(BAD_OUT))
def test_66_site_init_out_too_long_or_under_a_file(tmp_path, bad):
    env = fake_cluster(tmp_path)
    out, line = BAD_OUT[bad](tmp_path)
    before = tree(tmp_path)
    proc = subprocess.run(
        [tool('clusterbench'), 'site', 'init', '--system', 'newsite',
         '--out', str(out), '--no-check'],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, **env},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [f'clusterbench: error: {line}']
    assert 'Traceback' not in proc.stdout
    # Refused before scontrol was read: nothing printed, nothing written.
    assert proc.stdout == ''
    assert tree(tmp_path) == before

"""Energy readers on sysfs-shaped trees of our own: RAPL zones, wrap-around,
missing permissions, IPMI DCMI; and "not available" where nothing is exposed."""

import io
import json
import os
import shutil
import subprocess
import sys
import threading

import pytest
from conftest import PROJECT

from clusterbench.core.errors import ClusterbenchError
from clusterbench.machine import energy

SYSFS = os.path.join(PROJECT, 'tests', 'data', 'sysfs')
IB_NODE = os.path.join(SYSFS, 'ib-node')
VM_NODE = os.path.join(SYSFS, 'vm-node')
POWERCAP = ('sys', 'class', 'powercap')

DCMI = """\
    Instantaneous power reading:                   220 Watts
    Minimum during sampling period:                 80 Watts
    Maximum during sampling period:                350 Watts
    Average power reading over sample period:      210 Watts
    IPMI timestamp:                           Sat Nov 21 10:00:00 2026
    Sampling period:                          00000001 Seconds.
    Power reading state is:                   activated
"""


def no_ipmitool(name):
    return None


@pytest.fixture
def node(tmp_path):
    """A writable copy of the canned node with RAPL."""
    root = tmp_path / 'node'
    shutil.copytree(IB_NODE, root)
    return root


def set_counter(root, zone, uj):
    (root.joinpath(*POWERCAP, zone, 'energy_uj')).write_text(f'{uj}\n')


def test_zones_and_which_count():
    zones = energy.rapl_zones(IB_NODE)
    assert [(z.id, z.name) for z in zones] == [
        ('intel-rapl:0', 'package-0'),
        ('intel-rapl:0:0', 'dram'),
        ('intel-rapl:1', 'package-1'),
        ('intel-rapl:1:0', 'dram'),
    ]  # the mmio duplicate of package-0 is not a zone we count
    assert zones[0].max_range_uj == 262143328850
    assert [z.id for z in energy.counted_zones(zones)] == [z.id for z in zones]


def test_psys_alone_when_the_platform_has_it(node):
    psys = node.joinpath(*POWERCAP, 'intel-rapl:2')
    psys.mkdir()
    (psys / 'name').write_text('psys\n')
    (psys / 'energy_uj').write_text('7\n')
    (psys / 'max_energy_range_uj').write_text('262143328850\n')
    counted = energy.counted_zones(energy.rapl_zones(str(node)))
    assert [(z.id, z.name) for z in counted] == [('intel-rapl:2', 'psys')]


def test_energy_and_mean_power_across_a_counter_wrap(node):
    reader = energy.Reader(str(node), which=no_ipmitool)
    assert reader.available and reader.sources == ['rapl']
    head = reader.header()
    first = reader.sample()
    # 10 s later: package-0 wrapped past its range; the others simply grew.
    top = 262143328850
    set_counter(node, 'intel-rapl:0', top - 1_000_000)
    set_counter(node, 'intel-rapl:0:0', 20_000_000 + 5_000_000)
    set_counter(node, 'intel-rapl:1', 200_000_000 + 50_000_000)
    set_counter(node, 'intel-rapl:1:0', 30_000_000 + 5_000_000)
    second = reader.sample()
    set_counter(node, 'intel-rapl:0', 9_000_000)
    third = reader.sample()
    for t, record in ((100.0, first), (105.0, second), (110.0, third)):
        record['t'] = t
    result = energy.summarize([head, first, second, third])
    package0 = (top - 1_000_000 - 100_000_000) + (1_000_000 + 9_000_000)
    expected = (package0 + 5_000_000 + 50_000_000 + 5_000_000) / 1e6
    assert result['available'] and result['source'] == 'rapl'
    assert result['energy_j'] == pytest.approx(expected)
    assert result['duration_s'] == pytest.approx(10.0)
    assert result['mean_power_w'] == pytest.approx(expected / 10.0)
    assert result['zones_j']['package-0 (intel-rapl:0)'] == pytest.approx(
        package0 / 1e6
    )


def test_counter_delta():
    assert energy.counter_delta(10, 25, 100) == 15
    assert energy.counter_delta(90, 5, 100) == 15
    with pytest.raises(energy.NotAvailable, match='max_energy_range_uj is unknown'):
        energy.counter_delta(90, 5, None)


def test_permission_denied_counters_are_not_available():
    def denied(path):
        if path.endswith('energy_uj'):
            raise PermissionError(13, 'Permission denied', path)
        return energy.read_text(path)

    with pytest.raises(energy.NotAvailable, match='permission denied'):
        energy.rapl_zones(IB_NODE, read=denied)
    reader = energy.Reader(IB_NODE, which=no_ipmitool, read=denied)
    assert not reader.available
    head = reader.header()
    assert head['available'] is False
    assert 'RAPL energy counters not readable' in head['reason']
    assert 'IPMI: ipmitool not installed' in head['reason']
    assert energy.summarize([head]) == {
        'available': False,
        'host': head['host'],
        'reason': head['reason'],
    }


@pytest.mark.skipif(os.geteuid() == 0, reason='root reads files whatever their mode')
def test_permission_denied_by_file_mode(node):
    for zone in ('intel-rapl:0', 'intel-rapl:0:0', 'intel-rapl:1', 'intel-rapl:1:0'):
        node.joinpath(*POWERCAP, zone, 'energy_uj').chmod(0)
    with pytest.raises(energy.NotAvailable, match='permission denied'):
        energy.rapl_zones(str(node))


def test_nothing_exposed():
    reader = energy.Reader(VM_NODE, which=no_ipmitool)
    assert not reader.available
    assert reader.reasons == [
        f'RAPL: no powercap interface ({VM_NODE}/sys/class/powercap absent)',
        'IPMI: ipmitool not installed',
    ]


class FakeIPMI:
    def __init__(self, *outputs):
        self.outputs = list(outputs)

    def __call__(self, argv, **kwargs):
        assert argv[1:] == ['dcmi', 'power', 'reading']
        code, out, err = (
            self.outputs.pop(0) if len(self.outputs) > 1 else self.outputs[0]
        )
        return subprocess.CompletedProcess(argv, code, out, err)


def test_ipmi_dcmi_power_integrated():
    assert energy.parse_dcmi(DCMI) == 220.0
    reading = FakeIPMI(
        (0, DCMI, ''), (0, DCMI, ''), (0, DCMI.replace('220', '300'), '')
    )
    reader = energy.Reader(VM_NODE, which=lambda name: '/usr/bin/ipmitool', run=reading)
    assert reader.available and reader.sources == ['ipmi-dcmi']
    head, first, second = reader.header(), reader.sample(), reader.sample()
    first['t'], second['t'] = 0.0, 10.0
    result = energy.summarize([head, first, second])
    assert result['source'] == 'ipmi-dcmi'
    assert result['energy_j'] == pytest.approx((220 + 300) / 2 * 10)
    assert result['mean_power_w'] == pytest.approx(260.0)


def test_ipmi_without_access_or_deactivated():
    no_device = FakeIPMI(
        (1, '', 'Could not open device at /dev/ipmi0 or /dev/ipmi/0: No such file\n')
    )
    reader = energy.Reader(
        VM_NODE, which=lambda name: '/usr/bin/ipmitool', run=no_device
    )
    assert not reader.available
    assert (
        'IPMI: ipmitool dcmi power reading failed: Could not open device'
        in (reader.header()['reason'])
    )
    with pytest.raises(energy.NotAvailable, match='deactivated'):
        energy.parse_dcmi(DCMI.replace('activated', 'deactivated'))
    with pytest.raises(energy.NotAvailable, match='no "Instantaneous power reading"'):
        energy.parse_dcmi('garbage')


def test_sampler_samples_until_stopped(node):
    reader = energy.Reader(str(node), which=no_ipmitool)
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    out = io.StringIO()
    energy.run_sampler(out, reader, 0.05, stop)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert records[0]['kind'] == 'header'
    assert len(records) >= 4  # first, periodic, final
    result = energy.summarize(records)
    assert result['available'] and result['energy_j'] == 0.0


def test_sampler_with_nothing_writes_the_header_only():
    out = io.StringIO()
    energy.run_sampler(
        out, energy.Reader(VM_NODE, which=no_ipmitool), 1.0, threading.Event()
    )
    (line,) = out.getvalue().splitlines()
    assert json.loads(line)['available'] is False


def test_torn_or_missing_sample_files(tmp_path):
    path = tmp_path / 'energy.jsonl'
    path.write_text('{"kind": "header", "available": true}\n{"kind": "sam')
    with pytest.raises(ClusterbenchError) as err:
        energy.read_records(str(path))
    assert str(err.value).startswith(f'{path}:2: not a JSON record: ')
    assert '\n' not in str(err.value)
    summary = energy.summarize_file(str(path))
    assert (
        summary['available'] is False and ':2: not a JSON record' in summary['reason']
    )
    missing = energy.summarize_file(str(tmp_path / 'none.jsonl'))
    assert missing['available'] is False and 'not written' in missing['reason']


def run_cli(*args):
    return subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.energy', *args],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
    )


@pytest.mark.skipif(
    os.path.exists('/sys/class/powercap') or shutil.which('ipmitool') is not None,
    reason='this machine exposes something',
)
def test_cli_says_not_available_here(tmp_path):
    status = run_cli('status')
    assert status.returncode == 0
    (line,) = status.stdout.splitlines()
    assert line.startswith('energy: not available on ')
    sample = run_cli('sample', '-o', str(tmp_path / 'e.jsonl'))
    assert sample.returncode == 0
    summary = json.loads(run_cli('summarize', str(tmp_path / 'e.jsonl')).stdout)
    assert summary['available'] is False


def test_cli_on_a_canned_tree_and_bad_input(tmp_path):
    status = run_cli('--root', IB_NODE, 'status')
    assert 'RAPL (package-0, dram, package-1, dram)' in status.stdout
    snap = json.loads(run_cli('--root', IB_NODE, 'snapshot').stdout)
    assert snap['rapl']['intel-rapl:1'] == 200000000
    bad = run_cli(
        '--root', IB_NODE, 'sample', '-o', str(tmp_path / 'x'), '--interval', '0'
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == 'clusterbench: error: --interval 0.0: must be positive'
    unreadable = run_cli('summarize', str(tmp_path / 'missing.jsonl'))
    assert unreadable.returncode == 2
    assert unreadable.stderr.strip().count('\n') == 0


def test_job_script_lines_keep_the_benchmark_exit_status(tmp_path):
    from clusterbench.checks.plugins import energy as plugin

    out = tmp_path / 'e.jsonl'
    script = '\n'.join(
        [
            *plugin.sampler_commands(str(out), python=sys.executable, interval=0.1,
                                     root=IB_NODE),
            '(exit 3)',  # the benchmark
            plugin.STOP_COMMAND,
        ]
    )  # fmt: skip
    proc = subprocess.run(
        ['bash', '-c', script], cwd=PROJECT, timeout=60, capture_output=True
    )
    assert proc.returncode == 3
    records = energy.read_records(str(out))
    assert records[0]['available'] and len(records) >= 3  # header, first, final

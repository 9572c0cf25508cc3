"""Hardware provenance: the collector on canned /proc and /sys trees, and here."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import PROJECT, read

from clusterbench.machine import factreader, hwinfo
from clusterbench.machine.hwinfo import ABSENT

SYSFS = os.path.join(PROJECT, 'tests', 'data', 'sysfs')
IB_NODE = os.path.join(SYSFS, 'ib-node')
VM_NODE = os.path.join(SYSFS, 'vm-node')

COMMANDS = {
    'ibv_devinfo': read(os.path.join(SYSFS, 'ib-node.ibv_devinfo.txt')),
    'mpirun': 'mpirun (Open MPI) 4.1.6\n\nReport bugs to http://www.open-mpi.org/\n',
    'ompi_info': 'Open MPI v4.1.6\n\nhttp://www.open-mpi.org/community/help/\n',
    'mpichversion': 'MPICH Version:    \t4.1.2\nMPICH Device:    \tch4:ofi\n',
    'ucx_info': '# Library version: 1.15.0\n# Library path: /usr/lib64/libucs.so.0\n',
    'fi_info': 'fi_info: 1.18.0\nlibfabric: 1.18.0\nlibfabric api: 1.18\n',
    'gcc': 'gcc (GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)\nCopyright (C) 2021\n',
    'gfortran': 'GNU Fortran (GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)\n',
    'dmidecode': (
        '# dmidecode 3.5\nHandle 0x0030, DMI type 17, 92 bytes\nMemory Device\n'
        '\tSize: 32 GB\n\tSpeed: 4800 MT/s\n\tConfigured Memory Speed: 4400 MT/s\n'
        'Handle 0x0031, DMI type 17, 92 bytes\nMemory Device\n\tSize: No Module '
        'Installed\n\tSpeed: Unknown\n\tConfigured Memory Speed: Unknown\n'
    ),
}
LIBRARIES = {
    'openblas': {
        'config': 'OpenBLAS 0.3.26 DYNAMIC_ARCH SapphireRapids MAX_THREADS=64',
        'core': 'SapphireRapids',
        'path': '/usr/lib64/libopenblasp.so.0.3.26',
    },
    'blas': {'path': '/usr/lib64/libflexiblas.so.3.3'},
}


def fake_run(argv):
    return 0, COMMANDS[os.path.basename(argv[0])]


def collector(root, installed=True, probe=None, **kwargs):
    return hwinfo.Collector(
        proc=os.path.join(root, 'proc'),
        sys=os.path.join(root, 'sys'),
        etc=os.path.join(root, 'etc'),
        run=fake_run,
        which=(lambda name: f'/usr/bin/{name}') if installed else (lambda name: None),
        probe=probe or (lambda: LIBRARIES if installed else {}),
        **kwargs,
    )


@pytest.fixture(scope='module')
def ib_facts():
    return collector(IB_NODE).collect()


@pytest.fixture(scope='module')
def vm_facts():
    return collector(VM_NODE, installed=False).collect()


def test_cpu_topology_from_sysfs(ib_facts):
    cpu = ib_facts['cpu']
    assert cpu['model'] == 'Intel(R) Xeon(R) Platinum 8480+'
    assert cpu['vendor'] == 'GenuineIntel'
    assert (cpu['sockets'], cpu['cores'], cpu['threads']) == (2, 4, 8)
    assert (cpu['cores_per_socket'], cpu['threads_per_core']) == (2, 2)
    assert cpu['online'] == '0-7'
    assert {'avx512f', 'amx_tile'} <= set(cpu['isa'])
    assert ib_facts['host'] == 'cn001'
    assert ib_facts['kernel'] == {
        'release': '5.14.0-362.el9.x86_64',
        'version': 'Linux version 5.14.0-362.el9.x86_64 (mockbuild@example) #1 SMP '
        'PREEMPT_DYNAMIC',
        'arch': 'x86_64',
    }
    assert ib_facts['os'] == 'Rocky Linux 9.3 (Blue Onyx)'


def test_cpu_identity_caches_firmware_and_hca_link(ib_facts):
    cpu = ib_facts['cpu']
    assert (cpu['family'], cpu['model_number'], cpu['stepping']) == ('6', '143', '8')
    assert cpu['microcode'] == '0x2b000590'
    assert cpu['kind'] == 'Intel-6-143'
    assert cpu['cache'] == {'l2_bytes': 2048 * 1024, 'l3_bytes': 107520 * 1024}
    assert cpu['smt'] is True
    # Named from vendor, family and model (archspec knows only the host it
    # runs on, and a hypervisor hides the flags it reads).
    assert cpu['microarchitecture'] == 'sapphirerapids'
    assert 'cpu.microarchitecture' not in ib_facts['absent']
    platform = ib_facts['platform']
    assert platform['bios_version'] == '2.1.V2'
    assert platform['bios_date'] == '03/15/2024'
    assert platform['product'] == 'SYS-221H-TNR'
    assert platform['dimm_speed_mts'] == 4400
    # No /sys/hypervisor and no hypervisor flag in cpuinfo: bare metal.
    assert platform['hypervisor'] == 'none'
    hca = ib_facts['infiniband'][0]
    assert hca['pcie']['current_link_speed'] == '16.0 GT/s PCIe'
    assert hca['pcie']['current_link_width'] == '16'
    ident = hwinfo.summary(ib_facts)['identity']
    assert ident['cpu_kind'] == 'Intel-6-143'
    assert ident['microcode'] == '0x2b000590'
    assert ident['l3_bytes'] == 107520 * 1024
    assert ident['numa'] == ['0-1,4-5', '2-3,6-7']
    assert ident['hcas'][0]['firmware'] == hca['fw_ver']
    assert ident['hcas'][0]['pcie_width'] == '16'
    assert ident['hcas'][0]['ports'][0]['rate_gbps'] == 100.0
    assert ident['microarchitecture'] == 'sapphirerapids'
    assert 'microarchitecture' not in ident['absent']


def test_identity_of_a_vm_names_what_is_absent_and_why(vm_facts):
    ident = hwinfo.summary(vm_facts)['identity']
    # The canned VM's cpuinfo has neither family nor model: no kind, and why.
    assert ident['cpu_kind'] == ABSENT
    assert ident['absent']['cpu_kind'] == 'no vendor/family/model in cpuinfo'
    assert ident['absent']['microcode'] == 'no "microcode" in cpuinfo'
    assert ident['dimm_speed_mts'] == ABSENT
    assert ident['absent']['dimm_speed_mts'] == 'dmidecode not installed'
    assert ident['bios_version'] == ABSENT
    assert 'dmi' in ident['absent']['bios_version']
    assert ident['hcas'] == ABSENT


def test_cpu_kind_separates_generations_that_share_a_model_string(tmp_path):
    zen4 = 'processor : 0\nvendor_id : AuthenticAMD\ncpu family : 25\nmodel : 17\n'
    zen5 = 'processor : 0\nvendor_id : AuthenticAMD\ncpu family : 26\nmodel : 2\n'
    arm = (
        'processor : 0\nCPU implementer : 0x41\nCPU architecture: 8\n'
        'CPU variant : 0x1\nCPU part : 0xd40\n'
    )
    kinds = []
    for name, text in (('zen4', zen4), ('zen5', zen5), ('arm', arm)):
        (tmp_path / name).write_text(text + 'model name : AMD EPYC\n')
        kinds.append(hwinfo.cpu_kind_of_file(str(tmp_path / name)))
    assert kinds == ['AMD-25-17', 'AMD-26-2', 'ARM-0x41-8-0xd40']
    assert hwinfo.cpu_kind_of_file(str(tmp_path / 'missing')) == 'unknown'


def test_frequency_memory_and_numa(ib_facts):
    freq = ib_facts['frequency']
    assert (freq['min_mhz'], freq['max_mhz'], freq['base_mhz']) == (800, 3800, 2000)
    assert (freq['driver'], freq['governor'], freq['boost']) == (
        'intel_pstate',
        'performance',
        True,
    )
    assert freq['current_mhz'] == {'min': 2000.0, 'max': 2700.0}
    assert ib_facts['memory']['total_bytes'] == 263856128 * 1024
    assert ib_facts['memory']['hugepages'] == {'total': 0, 'size_bytes': 2048 * 1024}
    assert ib_facts['numa'] == [
        {'node': 0, 'cpus': '0-1,4-5', 'memory_bytes': 131928064 * 1024},
        {'node': 1, 'cpus': '2-3,6-7', 'memory_bytes': 131928064 * 1024},
    ]


def test_network_interfaces_and_speeds(ib_facts):
    nics = {n['name']: n for n in ib_facts['network']}
    assert set(nics) == {'eno1', 'eno2', 'ib0'}  # loopback left out
    assert nics['eno1'] == {
        'name': 'eno1',
        'kind': 'ether',
        'state': 'up',
        'speed_mbps': 25000,
        'mtu': 9000,
        'address': 'b8:ce:f6:00:00:01',
        'driver': 'mlx5_core',
    }
    # A link that is down reports speed -1: absent, and why.
    assert nics['eno2']['state'] == 'down'
    assert nics['eno2']['speed_mbps'] == ABSENT
    assert 'link down' in ib_facts['absent']['network.eno2.speed_mbps']
    assert (nics['ib0']['kind'], nics['ib0']['speed_mbps']) == ('infiniband', 100000)


def test_two_port_hca_with_one_port_down(ib_facts):
    (hca,) = ib_facts['infiniband']
    assert (hca['name'], hca['hca_type'], hca['board_id'], hca['fw_ver']) == (
        'mlx5_0',
        'MT4123',
        'MT_0000000223',
        '20.31.1014',
    )
    up, down = hca['ports']
    assert up == {
        'port': 1,
        'state': 'ACTIVE',
        'phys_state': 'LinkUp',
        'rate': '100 Gb/sec (4X EDR)',
        'rate_gbps': 100.0,
        'width': '4X',
        'speed': 'EDR',
        'link_layer': 'InfiniBand',
        'lid': '0x12',
    }
    assert (down['port'], down['state'], down['phys_state']) == (2, 'DOWN', 'Disabled')
    # ibv_devinfo, where installed, agrees.
    (dev,) = ib_facts['ibv_devinfo']
    assert (dev['hca_id'], dev['fw_ver'], dev['board_id']) == (
        'mlx5_0',
        '20.31.1014',
        'MT_0000000223',
    )
    assert [
        (p['port'], p['state'], p['active_width'], p['phys_state'])
        for p in dev['ports']
    ] == [
        (1, 'PORT_ACTIVE', '4X', 'LINK_UP'),
        (2, 'PORT_DOWN', '4X', 'DISABLED'),
    ]
    digest = hwinfo.summary(ib_facts)
    assert digest['infiniband'] == [
        'mlx5_0 MT4123 fw 20.31.1014: port 1 ACTIVE 100 Gb/sec (4X EDR), port 2 DOWN'
    ]


def test_software_versions(ib_facts):
    sw = ib_facts['software']
    assert sw['mpi'] == {
        'mpirun': 'mpirun (Open MPI) 4.1.6',
        'open_mpi': 'Open MPI v4.1.6',
        'mpich': '4.1.2 (device ch4:ofi)',
    }
    assert (sw['ucx'], sw['libfabric']) == ('1.15.0', '1.18.0')
    assert sw['compilers']['gcc'].startswith('gcc (GCC) 11.4.1')
    assert sw['blas']['openblas'] == '0.3.26'
    assert sw['blas']['openblas_core'] == 'SapphireRapids'
    assert sw['blas']['libblas'] == '/usr/lib64/libflexiblas.so.3.3'
    assert sw['blas']['mkl'] == ABSENT


def test_what_a_vm_lacks_is_marked_absent_with_a_reason(vm_facts):
    facts = vm_facts
    # Topology from cpuinfo when sysfs has none.
    assert (
        facts['cpu']['sockets'],
        facts['cpu']['cores'],
        facts['cpu']['threads'],
    ) == (
        1,
        2,
        2,
    )
    for key in ('min_mhz', 'max_mhz', 'driver', 'governor', 'boost'):
        assert facts['frequency'][key] == ABSENT
        assert 'cpufreq' in facts['absent'][f'frequency.{key}']
    assert facts['numa'] == ABSENT and 'NUMA' in facts['absent']['numa']
    assert facts['infiniband'] == ABSENT
    assert facts['ibv_devinfo'] == ABSENT
    assert facts['absent']['ibv_devinfo'] == 'ibv_devinfo not installed'
    assert facts['network'][0]['speed_mbps'] == ABSENT
    assert facts['kernel']['arch'] == ABSENT
    sw = facts['software']
    assert sw['mpi']['mpirun'] == ABSENT
    assert facts['absent']['software.mpi.mpirun'] == 'mpirun not installed'
    assert sw['blas']['openblas'] == ABSENT
    # Every absent value has its reason, and every reason an absent value.
    assert all(isinstance(why, str) and why for why in facts['absent'].values())
    text = '\n'.join(hwinfo.format_summary(hwinfo.summary(facts)))
    assert 'vm: AMD EPYC, 1 socket(s) x 2 cores x 1 thread(s), max MHz absent' in text
    assert 'infiniband: absent' in text


def test_unreadable_files_make_absent_facts_not_errors(monkeypatch):
    real_open = open

    def guarded(path, *args, **kwargs):
        if str(path).endswith(('cpuinfo_max_freq', 'fw_ver', '/meminfo')):
            raise PermissionError(13, 'Permission denied', path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(factreader, 'open', guarded, raising=False)
    facts = collector(IB_NODE).collect()
    assert facts['frequency']['max_mhz'] == ABSENT
    assert facts['frequency']['min_mhz'] == 800
    assert facts['infiniband'][0]['fw_ver'] == ABSENT
    assert facts['memory']['total_bytes'] == ABSENT
    assert facts['numa'][0]['memory_bytes'] == ABSENT


def test_garbage_never_crashes(tmp_path):
    root = tmp_path / 'junk'
    shutil.copytree(IB_NODE, root)
    (root / 'proc' / 'cpuinfo').write_text('processor : x\nnonsense\n\n\x00\x01')
    (root / 'proc' / 'meminfo').write_text('MemTotal: lots kB\n')
    (root / 'sys' / 'class' / 'net' / 'eno1' / 'speed').write_text('fast\n')
    (
        root / 'sys' / 'class' / 'infiniband' / 'mlx5_0' / 'ports' / '1' / 'rate'
    ).write_text('unknown\n')
    os.remove(root / 'sys' / 'devices' / 'system' / 'node' / 'node1' / 'cpulist')

    def failing_run(argv):
        return 1, ''

    facts = hwinfo.Collector(
        proc=str(root / 'proc'),
        sys=str(root / 'sys'),
        etc=str(tmp_path / 'no-etc'),
        run=failing_run,
        which=lambda name: f'/bin/{name}',
        probe=dict,
    ).collect()
    json.dumps(facts)
    assert facts['memory']['total_bytes'] == ABSENT
    assert facts['os'] == ABSENT
    assert {n['name']: n['speed_mbps'] for n in facts['network']}['eno1'] == ABSENT
    assert facts['infiniband'][0]['ports'][0]['rate_gbps'] == ABSENT
    assert facts['numa'][1]['cpus'] == ABSENT
    assert 'failed (exit 1)' in facts['absent']['software.mpi.mpirun']
    hwinfo.format_summary(hwinfo.summary(facts))


def test_rate_parser():
    assert hwinfo.parse_ib_rate('200 Gb/sec (4X HDR)') == {
        'gbps': 200.0,
        'width': '4X',
        'speed': 'HDR',
    }
    assert hwinfo.parse_ib_rate('25 Gb/sec') == {'gbps': 25.0}
    assert hwinfo.parse_ib_rate('') == {}


def test_one_file_per_node(tmp_path):
    facts = {'host': 'cn001', 'cpu': {}}
    first = hwinfo.write_per_node(str(tmp_path / 'hw'), facts)
    assert first == str(tmp_path / 'hw' / 'cn001.json')
    # Another rank on the same node finds the file and leaves it alone.
    assert hwinfo.write_per_node(str(tmp_path / 'hw'), {'host': 'cn001'}) is None
    assert json.loads(read(first)) == facts


def run_cli(*args):
    return subprocess.run(
        [sys.executable, '-m', 'clusterbench.cli.hwinfo', *args],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=120,
    )


def test_cli_on_a_canned_tree_and_bad_roots():
    proc = run_cli(
        '--proc',
        f'{IB_NODE}/proc',
        '--sys',
        f'{IB_NODE}/sys',
        '--etc',
        f'{IB_NODE}/etc',
    )
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout)
    assert facts['format'] == hwinfo.FORMAT
    assert facts['infiniband'][0]['ports'][1]['state'] == 'DOWN'
    bad = run_cli('--sys', '/nonexistent')
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        'clusterbench: error: --sys /nonexistent: no such directory'
    ]


def test_this_machine():
    facts = hwinfo.collect()
    json.dumps(facts)
    assert facts['host'] != ABSENT
    assert isinstance(facts['cpu']['threads'], int) and facts['cpu']['threads'] >= 1
    assert isinstance(facts['memory']['total_bytes'], int)
    if not os.path.isdir('/sys/class/infiniband'):
        assert facts['infiniband'] == ABSENT
    for key, value in facts['software']['mpi'].items():
        assert value == ABSENT or isinstance(value, str), key
    with open('/proc/cpuinfo') as f:
        text = f.read()
    if 'cpu family' in text:
        family = text.split('cpu family')[1].split(':')[1].split()[0]
        assert facts['cpu']['family'] == family
        assert facts['cpu']['kind'] == hwinfo.cpu_kind_of_file()
        assert facts['cpu']['kind'].split('-')[1] == family
    assert facts['cpu']['microarchitecture'] != ABSENT


def test_job_script_line_per_node():
    from clusterbench.checks.plugins.nodefacts import collect_command

    local = collect_command('/stage/t/hwinfo', python='/venv/bin/python')
    assert local == (
        'env -u LD_PRELOAD /venv/bin/python -m clusterbench.cli.hwinfo '
        '--output-dir /stage/t/hwinfo'
    )
    spanning = collect_command('/s/hw', python='py', launcher='srun -n 8')
    assert spanning.startswith(
        'env -u LD_PRELOAD srun -n 8 py -m clusterbench.cli.hwinfo'
    )


def test_library_probe_needs_no_clusterbench_on_the_path(tmp_path):
    """libprobe.py is run by file path in a child interpreter. Isolated (no
    PYTHONPATH, no cwd, no site-packages: no clusterbench to import), it gives
    what the collector's own probe gives on this node."""
    import ctypes.util

    from clusterbench.machine import libprobe, softfacts

    proc = subprocess.run(
        [sys.executable, '-I', '-S', libprobe.__file__],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env={'PATH': os.environ.get('PATH', ''), 'OPENBLAS_NUM_THREADS': '1'},
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found == softfacts.probe_libraries()
    if ctypes.util.find_library('openblas'):
        assert found['openblas']['config'].startswith('OpenBLAS ')
        assert os.path.isfile(found['openblas']['path'])


def test_a_child_is_asked_for_its_last_line_or_none():
    """factreader.last_line_of: what NPB's module probe and OpenBLAS's core
    probe ask a child (a real one: bash and this Python)."""
    ask = factreader.last_line_of
    assert ask(['bash', '-c', 'echo first; echo; echo "last  "'], 20) == 'last'
    assert ask(['bash', '-c', 'echo found; exit 3'], 20) is None
    assert ask(['bash', '-c', 'true'], 20) is None
    assert ask(['/nonexistent/program'], 20) is None
    assert ask(['bash', '-c', 'echo late; sleep 30'], 1) is None
    env = {'PATH': os.environ['PATH'], 'ASKED': 'yes'}
    assert ask([sys.executable, '-c', 'import os; print(os.environ["ASKED"])'],
               60, env) == 'yes'  # fmt: skip

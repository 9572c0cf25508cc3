"""Hardware and software facts of one node, kept with every result.

Read from /proc and /sys (roots configurable, for tests on canned trees) and
from a few commands, all without root: CPU model and topology, frequencies,
memory and NUMA layout, kernel, network interfaces and speeds, InfiniBand
HCAs and ports, and the MPI, UCX, libfabric, compiler and BLAS versions. A
fact that cannot be had is the string ``'absent'``, and ``facts['absent']``
says why, keyed by the fact's dotted path. Nothing here raises on odd input.

    python -m clusterbench.hwinfo                       JSON on stdout
    python -m clusterbench.hwinfo --output-dir DIR      DIR/<hostname>.json
    python -m clusterbench.hwinfo --summary             the one-screen digest
"""

import argparse
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys

FORMAT = 'clusterbench-hwinfo/1'
ABSENT = 'absent'

# Instruction-set extensions worth knowing for benchmark figures.
_ISA = (
    'sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512_bf16', 'avx512_vnni',
    'amx_tile', 'asimd', 'sve', 'sve2', 'vsx',
)  # fmt: skip

_NET_TYPES = {1: 'ether', 32: 'infiniband', 772: 'loopback'}


def run_command(argv, timeout=20):
    """(exit code, stdout + stderr) of *argv*, or None if it cannot run.

    LD_PRELOAD is dropped: a profiler preloaded for the benchmark must not
    load into the version queries.
    """
    env = {k: v for k, v in os.environ.items() if k != 'LD_PRELOAD'}
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return proc.returncode, (proc.stdout or '') + (proc.stderr or '')


# Run in a child interpreter: a library that misbehaves on load cannot take
# the collector down, and nothing stays loaded in the caller.
_PROBE = r"""
import ctypes, ctypes.util, json, os
out = {}
def path_of(lib):
    name = os.path.basename(lib)
    with open('/proc/self/maps') as maps:
        for line in maps:
            p = line.split()[-1]
            if p.startswith('/') and name.split('.so')[0] in os.path.basename(p):
                return os.path.realpath(p)
    return None
def load(*names):
    for n in names:
        found = ctypes.util.find_library(n)
        for cand in ([found] if found else []) + ['lib%s.so' % n]:
            try:
                return cand, ctypes.CDLL(cand)
            except OSError:
                pass
    return None, None
def text(lib, symbol):
    f = getattr(lib, symbol)
    f.restype = ctypes.c_char_p
    return f().decode()
def openblas(name, lib):
    config = text(lib, 'openblas_get_config')
    out['openblas'] = {'config': config, 'path': path_of(name)}
    out['openblas']['core'] = text(lib, 'openblas_get_corename')
def fabric(name, lib):
    v = lib.fi_version()
    version = '%d.%d' % (v >> 16, v & 65535)
    out['libfabric'] = {'version': version, 'path': path_of(name)}
for lib_name, record in (
    ('openblas', openblas),
    ('blas', lambda name, lib: out.update(blas={'path': path_of(name)})),
    ('mkl_rt', lambda name, lib: out.update(mkl={'path': path_of(name)})),
    ('ucp', lambda name, lib: out.update(
        ucx={'version': text(lib, 'ucp_get_version_string'), 'path': path_of(name)})),
    ('fabric', fabric),
):
    try:
        name, lib = load(lib_name)
        if lib is not None:
            record(name, lib)
    except Exception:
        pass
print(json.dumps(out))
"""


def probe_libraries():
    env = {
        **{k: v for k, v in os.environ.items() if k != 'LD_PRELOAD'},
        'OPENBLAS_NUM_THREADS': '1',
    }
    try:
        proc = subprocess.run(
            [sys.executable, '-c', _PROBE],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        return json.loads(proc.stdout) if proc.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}


class Collector:
    """Collects the facts of this node; every lookup is by root-relative path."""

    def __init__(
        self,
        proc='/proc',
        sys='/sys',
        etc='/etc',
        run=run_command,
        which=shutil.which,
        probe=probe_libraries,
        compilers=('gcc', 'gfortran'),
    ):
        self.proc, self.sys, self.etc = proc, sys, etc
        self.run, self.which, self.probe = run, which, probe
        self.compilers = compilers
        self.absent = {}

    # -- helpers --

    def missing(self, key, reason):
        self.absent[key] = reason
        return ABSENT

    def read(self, *parts):
        """Stripped text of a file, or None (missing, unreadable, EINVAL)."""
        try:
            with open(os.path.join(*parts), errors='replace') as f:
                return f.read().strip()
        except (OSError, ValueError):
            return None

    def read_int(self, *parts):
        text = self.read(*parts)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    def listdir(self, *parts):
        try:
            return sorted(os.listdir(os.path.join(*parts)))
        except OSError:
            return None

    def command(self, key, argv, pick=None):
        """First line (or *pick* of the output) of a command, else absent."""
        if self.which(argv[0]) is None:
            return self.missing(key, f'{argv[0]} not installed')
        result = self.run(argv)
        if result is None:
            return self.missing(key, f'{" ".join(argv)} could not run')
        code, text = result
        value = pick(text) if pick else _first_line(text)
        if code != 0 or not value:
            return self.missing(key, f'{" ".join(argv)} failed (exit {code})')
        return value

    # -- sections --

    def collect(self):
        facts = {
            'format': FORMAT,
            'collected': datetime.datetime.now(datetime.timezone.utc).strftime(
                '%Y-%m-%dT%H:%M:%SZ'
            ),
            'host': self.host(),
            'kernel': self.kernel(),
            'os': self.os_release(),
        }
        cpus = self.cpuinfo()
        facts['cpu'] = self.cpu(cpus)
        facts['frequency'] = self.frequency(cpus)
        facts['memory'] = self.memory()
        facts['numa'] = self.numa()
        facts['platform'] = self.platform()
        facts['network'] = self.network()
        facts['infiniband'] = self.infiniband()
        facts['ibv_devinfo'] = self.ibv_devinfo()
        facts['software'] = self.software()
        facts['absent'] = dict(sorted(self.absent.items()))
        return facts

    def identity_facts(self):
        """Only what identifies the machine (no software versions, no network):
        cheap enough to take around every benchmark job."""
        cpus = self.cpuinfo()
        cpu = self.cpu(cpus)
        facts = {
            'format': FORMAT,
            'host': self.host(),
            'kernel': self.kernel(),
            'cpu': cpu,
            'frequency': self.frequency(cpus),
            'memory': self.memory(),
            'numa': self.numa(),
            'platform': self.platform(),
            'infiniband': self.infiniband(),
        }
        facts['absent'] = dict(sorted(self.absent.items()))
        return facts

    def host(self):
        name = self.read(self.proc, 'sys', 'kernel', 'hostname')
        return name or self.missing('host', 'no hostname in proc')

    def kernel(self):
        release = self.read(self.proc, 'sys', 'kernel', 'osrelease')
        version = self.read(self.proc, 'version')
        arch = self.read(self.proc, 'sys', 'kernel', 'arch')
        if arch is None and os.path.realpath(self.proc) == '/proc':
            arch = os.uname().machine
        return {
            'release': release or self.missing('kernel.release', 'no osrelease'),
            'version': version or self.missing('kernel.version', 'no proc/version'),
            'arch': arch or self.missing('kernel.arch', 'no proc/sys/kernel/arch'),
        }

    def os_release(self):
        text = self.read(self.etc, 'os-release')
        if text:
            for line in text.splitlines():
                if line.startswith('PRETTY_NAME='):
                    return line.split('=', 1)[1].strip().strip('"')
        return self.missing('os', 'no PRETTY_NAME in os-release')

    def cpuinfo(self):
        return _cpuinfo_blocks(self.read(self.proc, 'cpuinfo') or '')

    def cpu(self, cpus):
        first = cpus[0] if cpus else {}
        model = first.get('model name') or first.get('cpu') or first.get('Model name')
        if not model and 'CPU implementer' in first:
            model = (
                f'implementer {first["CPU implementer"]} part {first.get("CPU part")}'
            )
        online = self.read(self.sys, 'devices', 'system', 'cpu', 'online')
        threads = len(cpus) or _cpulist_len(online)
        packages, cores = self._topology(cpus)
        flags = set((first.get('flags') or first.get('Features') or '').split())
        out = {
            'model': model or self.missing('cpu.model', 'no model in cpuinfo'),
            'vendor': first.get('vendor_id')
            or self.missing('cpu.vendor', 'no vendor_id'),
            'threads': threads or self.missing('cpu.threads', 'no processors listed'),
            'online': online or self.missing('cpu.online', 'no cpu/online in sysfs'),
            'isa': [f for f in _ISA if f in flags],
            **self._cpu_identity(first),
            'cache': self._caches(),
        }
        if packages and cores:
            out['sockets'] = len(packages)
            out['cores'] = len(cores)
            out['cores_per_socket'] = len(cores) // len(packages)
            out['threads_per_core'] = (
                max(1, threads // len(cores)) if threads else ABSENT
            )
        else:
            for key in ('sockets', 'cores', 'cores_per_socket', 'threads_per_core'):
                out[key] = self.missing(
                    f'cpu.{key}', 'no CPU topology in sysfs or cpuinfo'
                )
        smt = self.read_int(self.sys, 'devices', 'system', 'cpu', 'smt', 'active')
        if smt is not None:
            out['smt'] = bool(smt)
        elif isinstance(out['threads_per_core'], int):
            out['smt'] = out['threads_per_core'] > 1
        else:
            out['smt'] = self.missing('cpu.smt', 'no smt/active and no topology')
        return out

    def _cpu_identity(self, first):
        """Vendor, family, model, stepping, microcode; the key references use."""
        out = {}
        if 'CPU implementer' in first:
            fields = (
                ('family', 'CPU architecture'),
                ('model_number', 'CPU part'),
                ('stepping', 'CPU variant'),
                ('revision', 'CPU revision'),
            )
        else:
            fields = (
                ('family', 'cpu family'),
                ('model_number', 'model'),
                ('stepping', 'stepping'),
                ('microcode', 'microcode'),
            )
        for key, name in fields:
            out[key] = first.get(name) or self.missing(
                f'cpu.{key}', f'no "{name}" in cpuinfo'
            )
        if 'CPU implementer' in first and 'microcode' not in out:
            out['microcode'] = self.missing(
                'cpu.microcode', 'cpuinfo of this architecture has none'
            )
        out['kind'] = cpu_kind(first) or self.missing(
            'cpu.kind', 'no vendor/family/model in cpuinfo'
        )
        out['microarchitecture'] = self._microarchitecture()
        return out

    def _microarchitecture(self):
        if os.path.realpath(self.proc) != '/proc':
            return self.missing(
                'cpu.microarchitecture', 'archspec detects only the host it runs on'
            )
        try:
            import archspec.cpu

            return archspec.cpu.host().name
        except Exception as err:  # noqa: BLE001 - any archspec failure is absent
            return self.missing('cpu.microarchitecture', f'archspec: {err}')

    def _caches(self):
        """L2 and L3 size of cpu0 (bytes), from sysfs's cache leaves."""
        base = os.path.join(self.sys, 'devices', 'system', 'cpu', 'cpu0', 'cache')
        found = {}
        for leaf in self.listdir(base) or []:
            level = self.read_int(base, leaf, 'level')
            size = _size_bytes(self.read(base, leaf, 'size'))
            kind = self.read(base, leaf, 'type')
            if level in (2, 3) and size and kind in ('Unified', 'Data', None):
                found[f'l{level}_bytes'] = size
        for key in ('l2_bytes', 'l3_bytes'):
            if key not in found:
                found[key] = self.missing(f'cpu.cache.{key}', f'no such leaf in {base}')
        return found

    def platform(self):
        """Hypervisor, firmware and board, and the DIMMs' speed where readable."""
        dmi = os.path.join(self.sys, 'class', 'dmi', 'id')
        out = {'hypervisor': self._hypervisor()}
        for key in ('bios_vendor', 'bios_version', 'bios_date', 'sys_vendor'):
            out[key] = self.read(dmi, key) or self.missing(
                f'platform.{key}', f'no {key} in {dmi}'
            )
        out['product'] = self.read(dmi, 'product_name') or self.missing(
            'platform.product', f'no product_name in {dmi}'
        )
        out['dimm_speed_mts'] = self._dimm_speed()
        return out

    def _hypervisor(self):
        kind = self.read(self.sys, 'hypervisor', 'type')
        if kind:
            return kind
        if os.path.realpath(self.proc) == '/proc' and self.which('systemd-detect-virt'):
            # --vm: the hypervisor, not the container we may also run in.
            result = self.run(['systemd-detect-virt', '--vm'])
            if result is not None and _first_line(result[1]):
                return _first_line(result[1])  # "none" (exit 1): bare metal
        flags = (self.cpuinfo() or [{}])[0].get('flags', '').split()
        if 'hypervisor' in flags:
            return 'yes (cpuinfo flag; kind unknown)'
        if flags:
            return 'none'
        return self.missing('platform.hypervisor', 'no /sys/hypervisor, no cpu flags')

    def _dimm_speed(self):
        if self.which('dmidecode') is None:
            return self.missing('platform.dimm_speed_mts', 'dmidecode not installed')
        result = self.run(['dmidecode', '-t', '17'])
        if result is None or result[0] != 0:
            return self.missing(
                'platform.dimm_speed_mts', 'dmidecode -t 17 failed (needs root)'
            )
        speeds = sorted(
            {
                int(m)
                for m in re.findall(
                    r'Configured (?:Memory|Clock) Speed:\s*(\d+)\s*MT/s', result[1]
                )
            }
        )
        if not speeds:
            return self.missing(
                'platform.dimm_speed_mts', 'dmidecode lists no DIMM speed (a VM?)'
            )
        return speeds[0] if len(speeds) == 1 else speeds

    def _topology(self, cpus):
        base = os.path.join(self.sys, 'devices', 'system', 'cpu')
        packages, cores = set(), set()
        for entry in self.listdir(base) or []:
            if not re.fullmatch(r'cpu\d+', entry):
                continue
            pkg = self.read_int(base, entry, 'topology', 'physical_package_id')
            core = self.read_int(base, entry, 'topology', 'core_id')
            if pkg is not None and core is not None:
                packages.add(pkg)
                cores.add((pkg, core))
        if not cores:
            for c in cpus:
                if 'physical id' in c and 'core id' in c:
                    packages.add(c['physical id'])
                    cores.add((c['physical id'], c['core id']))
        return packages, cores

    def frequency(self, cpus):
        base = os.path.join(self.sys, 'devices', 'system', 'cpu')
        freq = os.path.join(base, 'cpu0', 'cpufreq')
        out = {}
        current = [float(c['cpu MHz']) for c in cpus if _is_float(c.get('cpu MHz'))]
        if current:
            out['current_mhz'] = {'min': min(current), 'max': max(current)}
        else:
            out['current_mhz'] = self.missing('frequency.current_mhz', 'no "cpu MHz"')
        if not os.path.isdir(freq):
            reason = f'no cpufreq in sysfs ({freq}): no frequency driver (VM?)'
            for key in (
                'min_mhz',
                'max_mhz',
                'base_mhz',
                'driver',
                'governor',
                'boost',
            ):
                out[key] = self.missing(f'frequency.{key}', reason)
            return out
        for key, name in (
            ('min_mhz', 'cpuinfo_min_freq'),
            ('max_mhz', 'cpuinfo_max_freq'),
            ('base_mhz', 'base_frequency'),
        ):
            khz = self.read_int(freq, name)
            out[key] = (
                khz / 1000 if khz else self.missing(f'frequency.{key}', f'no {name}')
            )
        for key, name in (
            ('driver', 'scaling_driver'),
            ('governor', 'scaling_governor'),
        ):
            out[key] = self.read(freq, name) or self.missing(
                f'frequency.{key}', f'no {name}'
            )
        boost = self.read_int(base, 'cpufreq', 'boost')
        no_turbo = self.read_int(base, 'intel_pstate', 'no_turbo')
        if boost is not None:
            out['boost'] = bool(boost)
        elif no_turbo is not None:
            out['boost'] = not no_turbo
        else:
            out['boost'] = self.missing(
                'frequency.boost', 'no cpufreq/boost or no_turbo'
            )
        return out

    def memory(self):
        info = _meminfo(self.read(self.proc, 'meminfo') or '')
        total = info.get('MemTotal')
        out = {
            'total_bytes': total or self.missing('memory.total_bytes', 'no MemTotal')
        }
        if 'HugePages_Total' in info:
            out['hugepages'] = {
                'total': info['HugePages_Total'],
                'size_bytes': info.get('Hugepagesize', ABSENT),
            }
        else:
            out['hugepages'] = self.missing('memory.hugepages', 'no HugePages_Total')
        return out

    def numa(self):
        base = os.path.join(self.sys, 'devices', 'system', 'node')
        nodes = [n for n in self.listdir(base) or [] if re.fullmatch(r'node\d+', n)]
        if not nodes:
            return self.missing('numa', f'no NUMA nodes in {base}')
        out = []
        for node in sorted(nodes, key=lambda n: int(n[4:])):
            mem = _meminfo(self.read(base, node, 'meminfo') or '', node_prefix=True)
            out.append(
                {
                    'node': int(node[4:]),
                    'cpus': self.read(base, node, 'cpulist') or ABSENT,
                    'memory_bytes': mem.get('MemTotal', ABSENT),
                }
            )
        return out

    def network(self):
        base = os.path.join(self.sys, 'class', 'net')
        names = self.listdir(base)
        if names is None:
            return self.missing('network', f'no {base}')
        out = []
        for name in names:
            path = os.path.join(base, name)
            kind = _NET_TYPES.get(self.read_int(path, 'type'), 'other')
            if kind == 'loopback':
                continue
            speed = self.read_int(path, 'speed')
            state = self.read(path, 'operstate') or ABSENT
            if speed is None or speed <= 0 or speed == 0xFFFFFFFF:
                speed = self.missing(
                    f'network.{name}.speed_mbps',
                    'not reported (link down, or a virtual device)',
                )
            out.append(
                {
                    'name': name,
                    'kind': kind,
                    'state': state,
                    'speed_mbps': speed,
                    'mtu': self.read_int(path, 'mtu') or ABSENT,
                    'address': self.read(path, 'address') or ABSENT,
                    'driver': self._driver(path) or 'virtual',
                }
            )
        return out

    def _driver(self, path):
        link = os.path.join(path, 'device', 'driver')
        if os.path.islink(link):
            return os.path.basename(os.readlink(link))
        for line in (self.read(path, 'device', 'uevent') or '').splitlines():
            if line.startswith('DRIVER='):
                return line.split('=', 1)[1]
        return None

    def infiniband(self):
        base = os.path.join(self.sys, 'class', 'infiniband')
        names = self.listdir(base)
        if not names:
            return self.missing('infiniband', f'no HCAs ({base} absent or empty)')
        out = []
        for name in names:
            path = os.path.join(base, name)
            hca = {'name': name}
            for key in ('hca_type', 'board_id', 'fw_ver', 'node_guid', 'node_type'):
                hca[key] = self.read(path, key) or self.missing(
                    f'infiniband.{name}.{key}', f'no {key}'
                )
            hca['pcie'] = self._pcie_link(name, os.path.join(path, 'device'))
            hca['ports'] = [
                self._ib_port(name, os.path.join(path, 'ports', port), port)
                for port in sorted(self.listdir(path, 'ports') or [], key=_natural)
            ]
            out.append(hca)
        return out

    def _pcie_link(self, hca, device):
        out = {}
        for key in (
            'current_link_speed',
            'current_link_width',
            'max_link_speed',
            'max_link_width',
        ):
            out[key] = self.read(device, key) or self.missing(
                f'infiniband.{hca}.pcie.{key}', f"no {key} in the HCA's PCI device"
            )
        return out

    def _ib_port(self, hca, path, port):
        rate = self.read(path, 'rate')
        parsed = parse_ib_rate(rate) if rate else {}
        where = f'infiniband.{hca}.ports.{port}'
        return {
            'port': int(port) if port.isdigit() else port,
            'state': _ib_state(self.read(path, 'state'))
            or self.missing(f'{where}.state', 'no state'),
            'phys_state': _ib_state(self.read(path, 'phys_state')) or ABSENT,
            'rate': rate or self.missing(f'{where}.rate', 'no rate'),
            'rate_gbps': parsed.get('gbps', ABSENT),
            'width': parsed.get('width', ABSENT),
            'speed': parsed.get('speed', ABSENT),
            'link_layer': self.read(path, 'link_layer') or ABSENT,
            'lid': self.read(path, 'lid') or ABSENT,
        }

    def ibv_devinfo(self):
        if self.which('ibv_devinfo') is None:
            return self.missing('ibv_devinfo', 'ibv_devinfo not installed')
        result = self.run(['ibv_devinfo', '-v'])
        if result is None or result[0] != 0:
            return self.missing('ibv_devinfo', 'ibv_devinfo -v failed (no devices?)')
        devices = parse_ibv_devinfo(result[1])
        return devices or self.missing('ibv_devinfo', 'ibv_devinfo listed no devices')

    def software(self):
        libs = self.probe() if self.probe else {}
        mpi = {
            'mpirun': self.command(
                'software.mpi.mpirun', ['mpirun', '--version'], _mpirun_version
            ),
            'open_mpi': self.command(
                'software.mpi.open_mpi', ['ompi_info', '--version']
            ),
            'mpich': self.command(
                'software.mpi.mpich', ['mpichversion'], _mpich_version
            ),
        }
        ucx = self.command('software.ucx', ['ucx_info', '-v'], _ucx_version)
        if ucx == ABSENT and 'ucx' in libs:
            self.absent.pop('software.ucx')
            ucx = f'{libs["ucx"]["version"]} (library)'
        fabric = self.command(
            'software.libfabric', ['fi_info', '--version'], _libfabric_version
        )
        if fabric == ABSENT and 'libfabric' in libs:
            self.absent.pop('software.libfabric')
            fabric = f'{libs["libfabric"]["version"]} (library API)'
        compilers = {
            cc: self.command(f'software.compilers.{cc}', [cc, '--version'])
            for cc in self.compilers
        }
        cc = os.environ.get('CC')
        if cc and cc not in compilers:
            compilers[cc] = self.command(f'software.compilers.{cc}', [cc, '--version'])
        return {
            'mpi': mpi,
            'ucx': ucx,
            'libfabric': fabric,
            'compilers': compilers,
            'blas': self._blas(libs),
        }

    def _blas(self, libs):
        out = {}
        if 'openblas' in libs:
            config = libs['openblas'].get('config', '')
            version = re.search(r'OpenBLAS\s+(\S+)', config)
            out['openblas'] = version.group(1) if version else config
            out['openblas_config'] = config
            if libs['openblas'].get('core'):
                out['openblas_core'] = libs['openblas']['core']
        else:
            out['openblas'] = self.missing(
                'software.blas.openblas', 'libopenblas not found'
            )
        if 'blas' in libs and libs['blas'].get('path'):
            out['libblas'] = libs['blas']['path']
        else:
            out['libblas'] = self.missing('software.blas.libblas', 'libblas not found')
        out['mkl'] = (libs.get('mkl') or {}).get('path') or self.missing(
            'software.blas.mkl', 'libmkl_rt not found'
        )
        return out


# -- parsers of sysfs values and command outputs --

_RATE = re.compile(r'([0-9.]+)\s*Gb/sec(?:\s*\((\d+X)\s*([A-Z0-9]+)\))?')


def parse_ib_rate(text):
    """'100 Gb/sec (4X EDR)' -> {'gbps': 100.0, 'width': '4X', 'speed': 'EDR'}."""
    found = _RATE.search(text or '')
    if not found:
        return {}
    out = {'gbps': float(found.group(1))}
    if found.group(2):
        out['width'], out['speed'] = found.group(2), found.group(3)
    return out


def _ib_state(text):
    """'4: ACTIVE' -> 'ACTIVE'."""
    if not text:
        return None
    return text.split(':', 1)[-1].strip() or None


def parse_ibv_devinfo(text):
    devices, dev, port = [], None, None
    for raw in text.splitlines():
        line = raw.strip()
        key, sep, value = line.partition(':')
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == 'hca_id':
            dev = {'hca_id': value, 'ports': []}
            devices.append(dev)
            port = None
        elif dev is None:
            continue
        elif key == 'port':
            port = {'port': int(value) if value.isdigit() else value}
            dev['ports'].append(port)
        elif port is not None and key in (
            'state', 'active_width', 'active_speed', 'phys_state', 'link_layer',
            'active_mtu',
        ):  # fmt: skip
            port[key] = re.sub(r'\s*\(\d+\)$', '', value)
        elif port is None and key in (
            'fw_ver',
            'board_id',
            'vendor_part_id',
            'node_guid',
        ):
            dev[key] = value
    return devices


def _cpuinfo_blocks(text):
    """The processor blocks of a /proc/cpuinfo text, as dicts."""
    blocks, current = [], {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
            current = {}
            continue
        key, sep, value = line.partition(':')
        if sep:
            current[key.strip()] = value.strip()
    if current:
        blocks.append(current)
    return [b for b in blocks if 'processor' in b]


def _first_line(text):
    for line in (text or '').splitlines():
        if line.strip():
            return line.strip()
    return None


def _mpirun_version(text):
    # Hydra prints a build-details block; its "Version:" line is the one.
    found = re.search(r'^\s*Version:\s*(\S+)', text or '', re.M)
    if 'HYDRA' in (text or '') and found:
        return f'MPICH hydra {found.group(1)}'
    return _first_line(text)


def _mpich_version(text):
    version = re.search(r'MPICH Version:\s*(\S+)', text or '')
    device = re.search(r'MPICH Device:\s*(\S+)', text or '')
    if not version:
        return None
    return version.group(1) + (f' (device {device.group(1)})' if device else '')


def _ucx_version(text):
    found = re.search(r'(?:Library|UCT) version[=:]?\s*([0-9][\w.]*)', text or '')
    return found.group(1) if found else None


def _libfabric_version(text):
    found = re.search(r'libfabric:\s*(\S+)', text or '')
    return found.group(1) if found else None


def _meminfo(text, node_prefix=False):
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if node_prefix and len(parts) >= 3 and parts[0] == 'Node':
            parts = parts[2:]
        if len(parts) < 2:
            continue
        key = parts[0].rstrip(':')
        try:
            value = int(parts[1])
        except ValueError:
            continue
        out[key] = value * 1024 if len(parts) > 2 and parts[2] == 'kB' else value
    return out


def _cpulist_len(text):
    count = 0
    for part in (text or '').split(','):
        lo, sep, hi = part.partition('-')
        try:
            count += int(hi) - int(lo) + 1 if sep else 1 if lo.strip() else 0
        except ValueError:
            return 0
    return count


_VENDORS = {'AuthenticAMD': 'AMD', 'GenuineIntel': 'Intel', 'HygonGenuine': 'Hygon'}


def cpu_kind(first):
    """'AMD-25-17' (vendor-family-model) of a cpuinfo block, None if unknown.

    The key references are indexed by: two generations that share a model
    string (``AMD EPYC`` in a VM) differ in family or model. Arm: implementer,
    architecture and part (``ARM-0x41-8-0xd40``).
    """
    if 'CPU implementer' in first:
        parts = [
            first.get(k) for k in ('CPU implementer', 'CPU architecture', 'CPU part')
        ]
        return 'ARM-' + '-'.join(parts) if all(parts) else None
    vendor = first.get('vendor_id')
    family, model = first.get('cpu family'), first.get('model')
    if not (vendor and family and model):
        return None
    return f'{_VENDORS.get(vendor, vendor)}-{family}-{model}'


def cpu_kind_of_file(path='/proc/cpuinfo'):
    """The :func:`cpu_kind` of the first processor in a cpuinfo file, or
    ``'unknown'`` (which matches no reference)."""
    try:
        with open(path, errors='replace') as f:
            blocks = _cpuinfo_blocks(f.read())
    except OSError:
        blocks = []
    return (cpu_kind(blocks[0]) if blocks else None) or 'unknown'


def _size_bytes(text):
    """'1024K' / '32M' (sysfs cache sizes) -> bytes."""
    found = re.fullmatch(r'(\d+)\s*([KMG]?)B?', (text or '').strip())
    if not found:
        return None
    return (
        int(found.group(1))
        * {'': 1, 'K': 2**10, 'M': 2**20, 'G': 2**30}[found.group(2)]
    )


def _is_float(text):
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


def _natural(name):
    return (0, int(name), '') if name.isdigit() else (1, 0, name)


def collect(**roots):
    """The facts of this node (see :class:`Collector` for the options)."""
    return Collector(**roots).collect()


# -- digest for run reports and the session report --


def summary(facts):
    """The facts that identify a node's kind, in one small dict."""
    cpu, freq, mem = (
        facts.get('cpu', {}),
        facts.get('frequency', {}),
        facts.get('memory', {}),
    )
    topo = ABSENT
    if all(isinstance(cpu.get(k), int) for k in ('sockets', 'cores_per_socket')):
        topo = (
            f'{cpu["sockets"]} socket(s) x {cpu["cores_per_socket"]} cores x '
            f'{cpu.get("threads_per_core")} thread(s)'
        )
    total = mem.get('total_bytes')
    numa = facts.get('numa')
    software = facts.get('software', {})
    mpi = software.get('mpi', {})
    out = {
        'host': facts.get('host', ABSENT),
        'cpu': cpu.get('model', ABSENT),
        'topology': topo,
        'threads': cpu.get('threads', ABSENT),
        'max_mhz': freq.get('max_mhz', ABSENT),
        'memory_gib': round(total / 2**30, 1) if isinstance(total, int) else ABSENT,
        'numa_nodes': len(numa) if isinstance(numa, list) else ABSENT,
        'kernel': facts.get('kernel', {}).get('release', ABSENT),
        'network': [
            f'{n["name"]} {n["kind"]} {n["state"]} '
            + (
                f'{n["speed_mbps"]} Mb/s'
                if isinstance(n['speed_mbps'], int)
                else 'speed absent'
            )
            for n in facts.get('network') or []
            if isinstance(n, dict)
        ],
        'infiniband': _ib_digest(facts.get('infiniband')),
        'mpi': next(
            (
                v
                for v in (mpi.get('mpirun'), mpi.get('open_mpi'), mpi.get('mpich'))
                if v and v != ABSENT
            ),
            ABSENT,
        ),
        'ucx': software.get('ucx', ABSENT),
        'libfabric': software.get('libfabric', ABSENT),
        'compiler': (software.get('compilers') or {}).get('gcc', ABSENT),
        'blas': (software.get('blas') or {}).get('openblas', ABSENT),
        'identity': identity(facts),
    }
    return out


#: Where each identity fact comes from in the full facts, and its reason key.
_IDENTITY = {
    'cpu_kind': ('cpu', 'kind'),
    'vendor': ('cpu', 'vendor'),
    'family': ('cpu', 'family'),
    'model': ('cpu', 'model_number'),
    'model_name': ('cpu', 'model'),
    'stepping': ('cpu', 'stepping'),
    'microcode': ('cpu', 'microcode'),
    'microarchitecture': ('cpu', 'microarchitecture'),
    'l2_bytes': ('cpu', 'cache', 'l2_bytes'),
    'l3_bytes': ('cpu', 'cache', 'l3_bytes'),
    'smt': ('cpu', 'smt'),
    'base_mhz': ('frequency', 'base_mhz'),
    'max_mhz': ('frequency', 'max_mhz'),
    'governor': ('frequency', 'governor'),
    'memory_bytes': ('memory', 'total_bytes'),
    'dimm_speed_mts': ('platform', 'dimm_speed_mts'),
    'hypervisor': ('platform', 'hypervisor'),
    'kernel': ('kernel', 'release'),
    'bios_version': ('platform', 'bios_version'),
    'bios_date': ('platform', 'bios_date'),
}


def identity(facts):
    """What makes a node the kind of machine it is, for provenance and for
    telling two machines apart: CPU generation down to stepping and microcode,
    caches, clocks, memory, NUMA, hypervisor, kernel, firmware and HCAs. An
    absent fact is ``'absent'`` and ``absent`` says why."""
    out, reasons = {}, {}
    why = facts.get('absent') or {}
    for key, path in _IDENTITY.items():
        value = facts
        for part in path:
            value = value.get(part, ABSENT) if isinstance(value, dict) else ABSENT
        out[key] = value
        if value == ABSENT:
            reasons[key] = why.get('.'.join(path), 'not collected')
    numa = facts.get('numa')
    if isinstance(numa, list):
        out['numa'] = [n.get('cpus', ABSENT) for n in numa if isinstance(n, dict)]
    else:
        out['numa'] = ABSENT
        reasons['numa'] = why.get('numa', 'not collected')
    hcas = facts.get('infiniband')
    if isinstance(hcas, list):
        out['hcas'] = [_hca_identity(h) for h in hcas if isinstance(h, dict)]
    else:
        out['hcas'] = ABSENT
        reasons['hcas'] = why.get('infiniband', 'not collected')
    out['absent'] = reasons
    return out


def _hca_identity(hca):
    pcie = hca.get('pcie') if isinstance(hca.get('pcie'), dict) else {}
    return {
        'name': hca.get('name', ABSENT),
        'model': hca.get('hca_type', ABSENT),
        'board_id': hca.get('board_id', ABSENT),
        'firmware': hca.get('fw_ver', ABSENT),
        'ports': [
            {
                'port': p.get('port'),
                'state': p.get('state', ABSENT),
                'rate_gbps': p.get('rate_gbps', ABSENT),
                'width': p.get('width', ABSENT),
            }
            for p in hca.get('ports') or []
            if isinstance(p, dict)
        ],
        'pcie_speed': pcie.get('current_link_speed', ABSENT),
        'pcie_width': pcie.get('current_link_width', ABSENT),
    }


def _ib_digest(hcas):
    if not isinstance(hcas, list):
        return ABSENT
    out = []
    for hca in hcas:
        ports = ', '.join(
            f'port {p["port"]} {p["state"]}'
            + (f' {p["rate"]}' if p['state'] == 'ACTIVE' else '')
            for p in hca.get('ports', [])
        )
        out.append(
            f'{hca["name"]} {hca.get("hca_type")} fw {hca.get("fw_ver")}: {ports}'
        )
    return out


def format_summary(digest, indent='  ', software=True):
    """Text lines of a :func:`summary` (missing keys show as absent)."""

    def get(key):
        return digest.get(key, ABSENT)

    ib = get('infiniband')
    lines = [
        f'{indent}{get("host")}: {get("cpu")}, {get("topology")}, max MHz '
        f'{get("max_mhz")}, {get("memory_gib")} GiB in {get("numa_nodes")} NUMA '
        f'node(s), kernel {get("kernel")}',
        f'{indent}  network: {"; ".join(digest.get("network") or []) or "none"}',
        f'{indent}  infiniband: ' + ('; '.join(ib) if isinstance(ib, list) else ib),
    ]
    ident = digest.get('identity')
    if isinstance(ident, dict):
        lines.insert(1, f'{indent}  identity: {format_identity(ident)}')
    if software:
        lines.append(f'{indent}  {format_software(digest)}')
    return lines


def format_identity(ident):
    """One line: 'AMD-25-17 stepping 1 microcode 0x1000065, ...'."""
    get = ident.get
    return (
        f'{get("cpu_kind", ABSENT)} stepping {get("stepping", ABSENT)} microcode '
        f'{get("microcode", ABSENT)} ({get("microarchitecture", ABSENT)}), '
        f'L2 {get("l2_bytes", ABSENT)} B, L3 {get("l3_bytes", ABSENT)} B, '
        f'hypervisor {get("hypervisor", ABSENT)}, BIOS {get("bios_version", ABSENT)}'
    )


def format_software(digest):
    get = digest.get
    return (
        f'MPI {get("mpi", ABSENT)}; UCX {get("ucx", ABSENT)}; libfabric '
        f'{get("libfabric", ABSENT)}; {get("compiler", ABSENT)}; OpenBLAS '
        f'{get("blas", ABSENT)}'
    )


def write_per_node(directory, facts):
    """Write DIR/<host>.json unless another rank on this node already did."""
    host = facts['host'] if facts['host'] != ABSENT else socket.gethostname()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f'{host}.json')
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return None
    with os.fdopen(fd, 'w') as f:
        json.dump(facts, f, indent=1)
        f.write('\n')
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog='python -m clusterbench.hwinfo',
        description='Hardware and software facts of this node, as JSON.',
    )
    ap.add_argument('--proc', default='/proc', help='proc root (default /proc)')
    ap.add_argument('--sys', default='/sys', help='sysfs root (default /sys)')
    ap.add_argument('--etc', default='/etc', help='etc root (default /etc)')
    ap.add_argument('--output-dir', help='write DIR/<hostname>.json, once per node')
    ap.add_argument('--summary', action='store_true', help='print the digest as text')
    args = ap.parse_args(argv)
    for what in ('proc', 'sys', 'etc'):
        root = getattr(args, what)
        if not os.path.isdir(root):
            print(
                f'clusterbench: error: --{what} {root}: no such directory',
                file=sys.stderr,
            )
            return 2
    facts = collect(proc=args.proc, sys=args.sys, etc=args.etc)
    if args.summary:
        print('\n'.join(format_summary(summary(facts), indent='')))
    elif args.output_dir:
        try:
            write_per_node(args.output_dir, facts)
        except OSError as err:
            raise SystemExit(
                f'clusterbench: error: {args.output_dir}: cannot write: {err.strerror}'
            ) from None
    else:
        print(json.dumps(facts, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())

"""All the facts of one node, read from /proc and /sys (roots configurable,
for tests on canned trees) and from a few commands, all without root: CPU
model and topology, frequencies, memory and NUMA layout, kernel and platform
here; the network (:mod:`netfacts`) and software (:mod:`softfacts`) sections
in their own modules. Nothing here raises on odd input.
"""

import datetime
import os
import re
import shutil

from clusterbench.machine import peak
from clusterbench.machine.factreader import ABSENT, FORMAT, first_line, run_command
from clusterbench.machine.netfacts import NetworkFacts
from clusterbench.machine.softfacts import SoftwareFacts, probe_libraries

# Instruction-set extensions worth knowing for benchmark figures.
_ISA = (
    'sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512_bf16', 'avx512_vnni',
    'amx_tile', 'asimd', 'sve', 'sve2', 'vsx',
)  # fmt: skip


class Collector(NetworkFacts, SoftwareFacts):
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

    # -- sections --

    def collect(self):
        facts = {
            'format': FORMAT,
            'collected': datetime.datetime.now(datetime.UTC).strftime(
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
        out['microarchitecture'] = self._microarchitecture(out['kind'])
        return out

    def _microarchitecture(self, kind):
        known = peak.microarchitecture(kind if isinstance(kind, str) else None)
        if known:
            return known
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
            if result is not None and first_line(result[1]):
                return first_line(result[1])  # "none" (exit 1): bare metal
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


# -- parsers of sysfs values and command outputs --


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


def collect(**roots):
    """The facts of this node (see :class:`Collector` for the options)."""
    return Collector(**roots).collect()

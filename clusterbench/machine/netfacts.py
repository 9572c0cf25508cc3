"""Network facts of a node: its interfaces and speeds from sysfs, its
InfiniBand HCAs and ports (sysfs and ``ibv_devinfo -v``).
"""

import os
import re

from clusterbench.machine.factreader import ABSENT, FactReader

_NET_TYPES = {1: 'ether', 32: 'infiniband', 772: 'loopback'}


class NetworkFacts(FactReader):
    """The ``network``, ``infiniband`` and ``ibv_devinfo`` sections."""

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


def _natural(name):
    return (0, int(name), '') if name.isdigit() else (1, 0, name)

"""Energy to solution from what a node exposes: powercap/RAPL or IPMI DCMI.

Sources, in order of preference:

* Linux powercap (``<root>/sys/class/powercap/intel-rapl:*``, also used for
  AMD): cumulative energy counters in µJ per zone. The node's energy is the
  sum of the top-level (package) zones and their ``dram`` subzones, or the
  ``psys`` zone alone where the platform has one. A counter wraps at its
  ``max_energy_range_uj``; sampling every few seconds catches every wrap.
* IPMI DCMI (``ipmitool dcmi power reading``): the node's instantaneous power
  in watts, integrated over the samples (trapezoids).

Nothing exposed, or nothing readable (RAPL counters are root-only on current
kernels; ipmitool needs /dev/ipmi0), is *not available*, with the reason.

    python -m clusterbench.cli.energy status                 what this node offers
    python -m clusterbench.cli.energy snapshot               one reading, as JSON
    python -m clusterbench.cli.energy sample -o FILE         sample until SIGTERM/SIGINT
    python -m clusterbench.cli.energy summarize FILE         energy_j, mean_power_w
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Optional

from clusterbench.core.errors import ClusterbenchError

POWERCAP = os.path.join('sys', 'class', 'powercap')
_ZONE = re.compile(r'^intel-rapl(:\d+)+$')


class NotAvailable(Exception):
    """This node offers no usable energy or power reading; str() is why."""


def read_text(path):
    with open(path) as f:
        return f.read().strip()


@dataclass(frozen=True)
class Zone:
    id: str  # 'intel-rapl:0', 'intel-rapl:0:1'
    name: str  # 'package-0', 'dram', 'core', 'psys'
    path: str
    max_range_uj: Optional[int]

    @property
    def top_level(self):
        return self.id.count(':') == 1


def rapl_zones(root='/', read=read_text):
    """The readable RAPL zones under *root*; :class:`NotAvailable` if none."""
    base = os.path.join(root, POWERCAP)
    try:
        entries = sorted(os.listdir(base))
    except FileNotFoundError:
        raise NotAvailable(f'no powercap interface ({base} absent)') from None
    except PermissionError:
        raise NotAvailable(f'{base}: permission denied') from None
    zones, denied = [], []
    for entry in entries:
        if not _ZONE.match(entry):
            continue
        path = os.path.join(base, entry)
        try:
            name = read(os.path.join(path, 'name'))
            read(os.path.join(path, 'energy_uj'))
        except PermissionError:
            denied.append(os.path.join(path, 'energy_uj'))
            continue
        except (OSError, ValueError):
            continue
        try:
            max_range = int(read(os.path.join(path, 'max_energy_range_uj')))
        except (OSError, ValueError):
            max_range = None
        zones.append(Zone(entry, name, path, max_range))
    if not zones:
        if denied:
            raise NotAvailable(
                f'RAPL energy counters not readable ({denied[0]}: permission '
                f'denied; they need root or a udev rule)'
            )
        raise NotAvailable(f'no RAPL zones under {base}')
    return zones


def counted_zones(zones):
    """The zones whose sum is the node's energy (no zone counted twice)."""
    psys = [z for z in zones if z.top_level and z.name == 'psys']
    if psys:
        return psys
    tops = {z.id for z in zones if z.top_level}
    return [
        z
        for z in zones
        if z.top_level or (z.name == 'dram' and z.id.rsplit(':', 1)[0] in tops)
    ]


def read_rapl(zones, read=read_text):
    return {z.id: int(read(os.path.join(z.path, 'energy_uj'))) for z in zones}


def counter_delta(before, after, max_range):
    """µJ between two readings of a counter that wraps at *max_range*."""
    if after >= before:
        return after - before
    if not max_range:
        raise NotAvailable('RAPL counter wrapped and max_energy_range_uj is unknown')
    return after + max_range - before


_DCMI_POWER = re.compile(r'Instantaneous power reading:\s*([0-9.]+)\s*Watts', re.I)
_DCMI_STATE = re.compile(r'Power reading state is:\s*(\w+)', re.I)


def parse_dcmi(text):
    """Watts from ``ipmitool dcmi power reading`` output."""
    state = _DCMI_STATE.search(text)
    if state and state.group(1).lower() != 'activated':
        raise NotAvailable(f'DCMI power reading is {state.group(1).lower()}')
    found = _DCMI_POWER.search(text)
    if not found:
        raise NotAvailable('ipmitool printed no "Instantaneous power reading"')
    return float(found.group(1))


def ipmi_power(ipmitool, run=subprocess.run):
    try:
        proc = run(
            [ipmitool, 'dcmi', 'power', 'reading'],
            capture_output=True,
            text=True,
            timeout=15,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise NotAvailable(f'{ipmitool} dcmi power reading: {err}') from None
    if proc.returncode != 0:
        why = (proc.stderr or proc.stdout or '').strip().splitlines()
        raise NotAvailable(
            f'ipmitool dcmi power reading failed: {why[0] if why else proc.returncode}'
        )
    return parse_dcmi(proc.stdout)


class Reader:
    """The sources this node offers, detected once; :meth:`sample` reads them."""

    def __init__(
        self, root='/', which=shutil.which, run=subprocess.run, read=read_text
    ):
        self.root, self._run, self._read = root, run, read
        self.zones, self.ipmitool, self.reasons = [], None, []
        try:
            self.zones = counted_zones(rapl_zones(root, read))
        except NotAvailable as why:
            self.reasons.append(f'RAPL: {why}')
        tool = which('ipmitool')
        if tool is None:
            self.reasons.append('IPMI: ipmitool not installed')
        else:
            try:
                ipmi_power(tool, run)
                self.ipmitool = tool
            except NotAvailable as why:
                self.reasons.append(f'IPMI: {why}')

    @property
    def available(self):
        return bool(self.zones or self.ipmitool)

    @property
    def sources(self):
        return (['rapl'] if self.zones else []) + (
            ['ipmi-dcmi'] if self.ipmitool else []
        )

    def header(self):
        head = {
            'kind': 'header',
            'host': socket.gethostname(),
            'available': self.available,
        }
        if self.available:
            head['sources'] = self.sources
            head['zones'] = {
                z.id: {'name': z.name, 'max_energy_range_uj': z.max_range_uj}
                for z in self.zones
            }
            if self.reasons:
                head['notes'] = self.reasons
        else:
            head['reason'] = '; '.join(self.reasons)
        return head

    def sample(self):
        out = {'kind': 'sample', 't': time.time()}
        if self.zones:
            try:
                out['rapl'] = read_rapl(self.zones, self._read)
            except (OSError, ValueError) as err:
                out['error'] = f'RAPL: {err}'
        if self.ipmitool:
            try:
                out['ipmi_w'] = ipmi_power(self.ipmitool, self._run)
            except NotAvailable as why:
                out['error'] = f'IPMI: {why}'
        return out


def summarize(records):
    """Energy and mean power from a header and its samples (dicts, in order).

    Returns ``{'available': False, 'reason': ...}`` or the figures:
    ``energy_j``, ``mean_power_w``, ``duration_s``, ``source`` (RAPL where
    present, else IPMI) and the energy per RAPL zone.
    """
    records = list(records)
    if not records or records[0].get('kind') != 'header':
        return {'available': False, 'reason': 'no energy header recorded'}
    head = records[0]
    host = head.get('host')
    if not head.get('available'):
        return {'available': False, 'host': host, 'reason': head.get('reason', '')}
    samples = [r for r in records[1:] if r.get('kind') == 'sample']
    zones = head.get('zones') or {}
    result = {'available': True, 'host': host}
    try:
        if 'rapl' in head.get('sources', []):
            rapl = [s for s in samples if 'rapl' in s]
            if len(rapl) < 2:
                raise NotAvailable('fewer than two RAPL readings')
            per_zone = {}
            for zid, zone in zones.items():
                uj = sum(
                    counter_delta(
                        a['rapl'][zid], b['rapl'][zid], zone.get('max_energy_range_uj')
                    )
                    for a, b in zip(rapl, rapl[1:])
                )
                per_zone[f'{zone["name"]} ({zid})'] = uj / 1e6
            joules, t0, t1 = sum(per_zone.values()), rapl[0]['t'], rapl[-1]['t']
            result.update(source='rapl', zones_j=per_zone)
        else:
            ipmi = [s for s in samples if 'ipmi_w' in s]
            if len(ipmi) < 2:
                raise NotAvailable('fewer than two IPMI power readings')
            joules = sum(
                (a['ipmi_w'] + b['ipmi_w']) / 2 * (b['t'] - a['t'])
                for a, b in zip(ipmi, ipmi[1:])
            )
            t0, t1 = ipmi[0]['t'], ipmi[-1]['t']
            result['source'] = 'ipmi-dcmi'
    except (NotAvailable, KeyError, TypeError) as why:
        what = f'missing value {why}' if isinstance(why, KeyError) else str(why)
        return {'available': False, 'host': host, 'reason': f'samples unusable: {what}'}
    duration = t1 - t0
    result.update(
        energy_j=joules,
        duration_s=duration,
        mean_power_w=joules / duration if duration > 0 else 0.0,
        samples=len(samples),
    )
    return result


def read_records(path):
    """The JSON lines of a sample file; one-line errors name the file and line."""
    records = []
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as err:
                    # The sampler killed mid-write leaves at most a torn last line.
                    raise ClusterbenchError(
                        f'{path}:{number}: not a JSON record: {err.msg}'
                    ) from None
    except OSError as err:
        raise ClusterbenchError(f'{path}: cannot read: {err.strerror}') from None
    except UnicodeDecodeError as err:
        raise ClusterbenchError(f'{path}: not text: {err.reason}') from None
    return records


def summarize_file(path):
    """:func:`summarize` of a sample file; a missing file is *not available*."""
    if not os.path.exists(path):
        return {'available': False, 'reason': f'no energy samples ({path} not written)'}
    try:
        return summarize(read_records(path))
    except ClusterbenchError as err:
        return {'available': False, 'reason': str(err)}


def run_sampler(out, reader, interval, stop):
    """Write the header, then a sample every *interval* s until *stop* is set.

    The header and the first sample are written at once: a job that waits
    for the file to be non-empty starts its benchmark after the first reading.
    """

    def emit(*records):
        out.write(''.join(json.dumps(r) + '\n' for r in records))
        out.flush()

    if not reader.available:
        emit(reader.header())
        return
    emit(reader.header(), reader.sample())
    while not stop.wait(interval):
        emit(reader.sample())
    emit(reader.sample())


if __name__ == '__main__':
    # The program is the command line's (argparse lives in cli alone).
    print(
        'clusterbench: error: clusterbench.machine.energy is a library: '
        'run python -m clusterbench.cli.energy',
        file=sys.stderr,
    )
    sys.exit(2)

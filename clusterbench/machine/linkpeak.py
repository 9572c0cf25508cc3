"""The theoretical peak bandwidth of a partition's link, from its declared extras.

A partition declares its interconnect in its site configuration's ``extras``;
nothing is detected or guessed. Accepted keys (all optional; bandwidths are
per direction, MB/s = 10**6 bytes/s, rates in Gbit/s = 10**9 bit/s)::

    'link_peak_mbs': 1000,          # the link's peak, given directly
    'link': {                       # or the link described:
        'rate_gbps': 10,            #   signalling rate of the whole link (all
                                    #   lanes), as InfiniBand names it (4x SDR: 10)
        # or 'lane_gbps': 2.5, 'width': 4,   per-lane rate x lanes
        'encoding': '8b10b',        #   line code: 8b10b, 64b66b, 128b130b,
                                    #   128b132b, 242b256b, none, or the data
                                    #   fraction as a number (0.8)
        'width': 4,                 #   lanes; with rate_gbps only descriptive
        # or 'data_gbps': 100,      #   the data rate after encoding (100 GbE)
    },
    'pcie_peak_mbs': 2000,          # the host slot's peak, given directly
    'pcie': {'gen': 1, 'lanes': 8}, # or the slot described: PCIe generation 1-6
                                    #   x lanes (per-lane rate and line code of
                                    #   the generation)

The effective peak is the smaller of the link's and the slot's: a 4x SDR
link (10 Gb/s signalling, 8b10b: 1000 MB/s) in a PCIe gen 1 x8 slot (2000
MB/s) peaks at 1000 MB/s, and 914 MB/s measured is 91.4%. Bidirectional
efficiency is measured aggregate ÷ twice the peak (links and PCIe are full
duplex). A slot without a link is not a link peak: no efficiency then, and
the reason says so. Malformed declarations raise :class:`LinkPeakError` with a
one-line message naming the partition and the key.
"""

import numbers
from dataclasses import dataclass

from clusterbench.core.errors import ClusterbenchError

#: Data bits per line bit of each line code.
ENCODINGS = {
    '8b10b': 8 / 10,
    '64b66b': 64 / 66,
    '128b130b': 128 / 130,
    '128b132b': 128 / 132,
    '242b256b': 242 / 256,
    'none': 1.0,
}

#: PCIe generation -> (GT/s per lane, line code). Gen 6 counts its FLIT
#: framing (242 of 256 bytes carry data) as the line code.
PCIE = {
    1: (2.5, '8b10b'),
    2: (5.0, '8b10b'),
    3: (8.0, '128b130b'),
    4: (16.0, '128b130b'),
    5: (32.0, '128b130b'),
    6: (64.0, '242b256b'),
}

LINK_KEYS = {'rate_gbps', 'lane_gbps', 'width', 'encoding', 'data_gbps'}
PCIE_KEYS = {'gen', 'lanes'}


class LinkPeakError(ClusterbenchError):
    """A link or slot declaration that cannot give a peak."""


@dataclass(frozen=True)
class LinkPeak:
    """Declared peaks, MB/s per direction, and how they were derived."""

    link_mbs: float
    slot_mbs: float = None
    link_how: str = ''
    slot_how: str = ''

    @property
    def peak_mbs(self):
        """The effective peak: the link's, or the slot's when that is lower."""
        if self.slot_mbs is not None and self.slot_mbs < self.link_mbs:
            return self.slot_mbs
        return self.link_mbs

    @property
    def limited_by(self):
        return 'slot' if self.peak_mbs != self.link_mbs else 'link'

    def describe(self):
        """One line: ``link ... = 1000 MB/s; slot ... = 2000 MB/s; peak ...``."""
        parts = [f'link {self.link_how} = {self.link_mbs:.6g} MB/s']
        if self.slot_mbs is not None:
            parts.append(f'slot {self.slot_how} = {self.slot_mbs:.6g} MB/s')
        parts.append(f'peak {self.peak_mbs:.6g} MB/s ({self.limited_by})')
        return '; '.join(parts)

    def as_dict(self):
        return {
            'link_mbs': self.link_mbs,
            'slot_mbs': self.slot_mbs,
            'peak_mbs': self.peak_mbs,
            'limited_by': self.limited_by,
            'how': self.describe(),
        }


def _positive(value, where):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value <= 0:
        raise LinkPeakError(f'{where}: expected a positive number, got {value!r}')
    return float(value)


def _encoding(value, where):
    if isinstance(value, str):
        try:
            return ENCODINGS[value.lower()], value.lower()
        except KeyError:
            known = ', '.join(ENCODINGS)
            raise LinkPeakError(
                f'{where}: unknown encoding {value!r} (known: {known}, or a '
                f'data fraction such as 0.8)'
            ) from None
    fraction = _positive(value, where)
    if fraction > 1:
        raise LinkPeakError(f'{where}: a data fraction is at most 1, got {value!r}')
    return fraction, f'{fraction:g} data'


def _unknown_keys(decl, known, where):
    if not isinstance(decl, dict):
        raise LinkPeakError(f'{where}: expected a mapping, got {decl!r}')
    unknown = sorted(set(decl) - known)
    if unknown:
        raise LinkPeakError(
            f'{where}: unknown key(s) {", ".join(unknown)} '
            f'(accepted: {", ".join(sorted(known))})'
        )


def link_mbs(decl, where='extras.link'):
    """``(MB/s, how)`` of a ``link`` declaration."""
    _unknown_keys(decl, LINK_KEYS, where)
    given = [k for k in ('rate_gbps', 'lane_gbps', 'data_gbps') if k in decl]
    if len(given) != 1:
        raise LinkPeakError(
            f'{where}: give exactly one of rate_gbps (whole link), '
            f'lane_gbps (with width) or data_gbps; got {given or "none"}'
        )
    (kind,) = given
    rate = _positive(decl[kind], f'{where}.{kind}')
    width = decl.get('width', 1)
    if 'width' in decl:
        width = _positive(width, f'{where}.width')
    if kind == 'data_gbps':
        if 'encoding' in decl:
            raise LinkPeakError(
                f'{where}: data_gbps is after encoding; drop encoding or give '
                f'rate_gbps instead'
            )
        return rate * 1e3 / 8, f'{rate:g} Gb/s data'
    if 'encoding' not in decl:
        raise LinkPeakError(
            f'{where}: encoding is required with {kind} (e.g. 8b10b for '
            f'SDR-QDR InfiniBand, 64b66b for FDR and later, none)'
        )
    fraction, code = _encoding(decl['encoding'], f'{where}.encoding')
    if kind == 'lane_gbps':
        how = f'{width:g} x {rate:g} Gb/s {code}'
        rate *= width
    else:
        lanes = f'{width:g}x ' if 'width' in decl else ''
        how = f'{lanes}{rate:g} Gb/s {code}'
    return rate * fraction * 1e3 / 8, how


def pcie_mbs(decl, where='extras.pcie'):
    """``(MB/s, how)`` of a ``pcie`` declaration: generation x lanes."""
    _unknown_keys(decl, PCIE_KEYS, where)
    gen, lanes = decl.get('gen'), decl.get('lanes')
    if gen not in PCIE:
        raise LinkPeakError(
            f'{where}.gen: PCIe generation {gen!r} unknown (known: 1-{max(PCIE)})'
        )
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise LinkPeakError(f'{where}.lanes: expected a lane count, got {lanes!r}')
    rate, code = PCIE[gen]
    return lanes * rate * ENCODINGS[code] * 1e3 / 8, f'PCIe gen{gen} x{lanes}'


def from_extras(extras, source='partition'):
    """The declared :class:`LinkPeak` of a partition, or ``(None, reason)``.

    Returns ``(LinkPeak, '')`` when a link peak is declared, else
    ``(None, why there is no efficiency figure)``. Raises
    :class:`LinkPeakError` for a malformed declaration.
    """
    extras = extras or {}
    for a, b in (('link', 'link_peak_mbs'), ('pcie', 'pcie_peak_mbs')):
        if a in extras and b in extras:
            raise LinkPeakError(f'{source}: extras declare both {a} and {b}; keep one')
    if 'link_peak_mbs' in extras:
        link = _positive(extras['link_peak_mbs'], f'{source}: extras.link_peak_mbs')
        link_how = 'declared'
    elif 'link' in extras:
        link, link_how = link_mbs(extras['link'], f'{source}: extras.link')
    else:
        reason = 'no link peak declared (extras.link or extras.link_peak_mbs)'
        if 'pcie' in extras or 'pcie_peak_mbs' in extras:
            reason += '; a PCIe slot alone does not bound the link'
        return None, f'{source}: {reason}'
    slot = slot_how = None
    if 'pcie_peak_mbs' in extras:
        slot = _positive(extras['pcie_peak_mbs'], f'{source}: extras.pcie_peak_mbs')
        slot_how = 'declared'
    elif 'pcie' in extras:
        slot, slot_how = pcie_mbs(extras['pcie'], f'{source}: extras.pcie')
    return LinkPeak(link, slot, link_how, slot_how or ''), ''


def efficiency(measured_mbs, peak, bidirectional=False):
    """Measured peak as a percentage of the theoretical one (x2 if bidirectional)."""
    theoretical = peak.peak_mbs * (2 if bidirectional else 1)
    return 100.0 * measured_mbs / theoretical

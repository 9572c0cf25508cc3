"""A core's and a node's theoretical double-precision peak, and the
microarchitecture of a CPU kind.

The peak is *computed* (FLOP per cycle of the core's vector units x clock x
cores) unless a site declares it (``peak_gflops_per_node`` in a partition's
``extras``), and every peak says which it is and where its numbers came from.

Why not archspec alone: it guesses the microarchitecture from the CPU flags,
and a hypervisor hides some flags (a Zen 3 guest reads ``zen2``, an Emerald
Rapids guest ``icelake``). The vendor, family and model a CPU reports are not
hidden, so the known kinds are named from them, and archspec is the fallback.
"""

from dataclasses import dataclass

#: (vendor, family, first model, last model) -> microarchitecture.
_KNOWN = (
    ('AMD', 23, 0x00, 0x2F, 'zen'),
    ('AMD', 23, 0x30, 0xFF, 'zen2'),
    ('AMD', 25, 0x00, 0x0F, 'zen3'),
    ('AMD', 25, 0x10, 0x1F, 'zen4'),
    ('AMD', 25, 0x20, 0x5F, 'zen3'),
    ('AMD', 25, 0x60, 0xAF, 'zen4'),
    ('AMD', 26, 0x00, 0xFF, 'zen5'),
    ('Intel', 6, 0x55, 0x55, 'skylake_avx512'),
    ('Intel', 6, 0x6A, 0x6C, 'icelake'),
    ('Intel', 6, 0x8F, 0x8F, 'sapphirerapids'),
    ('Intel', 6, 0xCF, 0xCF, 'emeraldrapids'),
    ('Intel', 6, 0xAD, 0xAE, 'graniterapids'),
)

#: Double-precision FLOP per cycle of one core (FMA units x lanes x 2).
#: Zen 4 executes AVX-512 on 256-bit units: no more than Zen 3 per cycle.
FLOP_PER_CYCLE = {
    'zen': 8,
    'zen2': 16,
    'zen3': 16,
    'zen4': 16,
    'zen5': 32,
    'haswell': 16,
    'broadwell': 16,
    'skylake': 16,
    'skylake_avx512': 32,
    'cascadelake': 32,
    'icelake': 32,
    'sapphirerapids': 32,
    'emeraldrapids': 32,
    'graniterapids': 32,
}


def microarchitecture(kind, fallback=None):
    """The microarchitecture of a CPU kind (``AMD-25-1`` -> ``zen3``), or
    *fallback* (archspec's guess) for a kind this table does not know."""
    # A hand-edited report may hold anything where the kind is: not a kind.
    parts = (kind if isinstance(kind, str) else '').split('-')
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        vendor, family, model = parts[0], int(parts[1]), int(parts[2])
        for k_vendor, k_family, first, last, name in _KNOWN:
            if (vendor, family) == (k_vendor, k_family) and first <= model <= last:
                return name
    return fallback


def flop_per_cycle_from_flags(flags):
    """FLOP per cycle from the vector ISA alone, for an unknown core: the
    widest FMA-capable vector unit it reports, two of them."""
    flags = set(flags or ())
    if 'avx512f' in flags:
        return 32
    if 'fma' in flags and 'avx2' in flags:
        return 16
    if 'avx' in flags:
        return 8
    if 'sse2' in flags:
        return 4
    return None


@dataclass(frozen=True)
class Peak:
    """A theoretical double-precision peak in GFlop/s."""

    per_core: float
    cores: int
    #: 'computed' or 'declared'
    how: str
    #: Where the numbers came from, for the reader of a report.
    source: str

    @property
    def per_node(self):
        return self.per_core * self.cores


def computed(kind, cores, mhz, flags=(), fallback_arch=None):
    """The computed peak of a node, or None with nothing to compute it from.

    *mhz*: the clock the cores run at (cpufreq's maximum where there is one,
    else cpuinfo's); a core in turbo beyond it reads more than 100 %.
    """
    arch = microarchitecture(kind, fallback_arch)
    per_cycle = FLOP_PER_CYCLE.get(arch or '')
    basis = f'{arch}: {per_cycle} FLOP/cycle'
    if per_cycle is None:
        per_cycle = flop_per_cycle_from_flags(flags)
        basis = f'vector ISA: {per_cycle} FLOP/cycle'
    if not per_cycle or not mhz or not cores:
        return None
    per_core = per_cycle * float(mhz) / 1000.0
    return Peak(
        per_core,
        int(cores),
        'computed',
        f'{basis} x {float(mhz):.0f} MHz x {int(cores)} cores',
    )


def declared(gflops_per_node, cores):
    """A peak the site declares (``peak_gflops_per_node``)."""
    per_node = float(gflops_per_node)
    return Peak(per_node / int(cores), int(cores), 'declared', 'declared by the site')

"""Theoretical link peaks from a partition's declared extras."""

import pytest

from clusterbench.machine import linkpeak
from clusterbench.machine.linkpeak import LinkPeakError

SDR_4X_PCIE1_X8 = {
    'link': {'rate_gbps': 10, 'encoding': '8b10b', 'width': 4},
    'pcie': {'gen': 1, 'lanes': 8},
}


def peak_of(extras):
    peak, reason = linkpeak.from_extras(extras, 'partition p:q')
    assert reason == ''
    return peak


def test_4x_sdr_through_a_pcie_gen1_x8_slot():
    peak = peak_of(SDR_4X_PCIE1_X8)
    # 10 Gb/s signalling, 8 of 10 bits data: 1000 MB/s; the slot has 2000.
    assert peak.link_mbs == pytest.approx(1000.0)
    assert peak.slot_mbs == pytest.approx(2000.0)
    assert peak.peak_mbs == pytest.approx(1000.0)
    assert peak.limited_by == 'link'
    assert linkpeak.efficiency(914.0, peak) == pytest.approx(91.4)
    # Both directions at once against twice the peak.
    assert linkpeak.efficiency(1828.0, peak, bidirectional=True) == pytest.approx(91.4)
    assert peak.describe() == (
        'link 4x 10 Gb/s 8b10b = 1000 MB/s; slot PCIe gen1 x8 = 2000 MB/s; '
        'peak 1000 MB/s (link)'
    )


def test_per_lane_rate_times_width_is_the_same_link():
    peak = peak_of({'link': {'lane_gbps': 2.5, 'width': 4, 'encoding': '8b10b'}})
    assert peak.peak_mbs == pytest.approx(1000.0)
    assert peak.slot_mbs is None


def test_fdr_in_a_gen3_x8_slot_and_edr_in_a_gen3_x8_slot():
    fdr = {'lane_gbps': 14.0625, 'width': 4, 'encoding': '64b66b'}
    peak = peak_of({'link': fdr, 'pcie': {'gen': 3, 'lanes': 8}})
    assert peak.link_mbs == pytest.approx(14.0625 * 4 * 64 / 66 / 8 * 1000)
    assert peak.slot_mbs == pytest.approx(8 * 8 * 128 / 130 / 8 * 1000)
    assert peak.limited_by == 'link'
    # 100 Gb/s of data (EDR, 100 GbE) cannot get through 8 lanes of gen 3.
    peak = peak_of({'link': {'data_gbps': 100}, 'pcie': {'gen': 3, 'lanes': 8}})
    assert peak.link_mbs == pytest.approx(12500.0)
    assert peak.peak_mbs == pytest.approx(7876.92, rel=1e-5)
    assert peak.limited_by == 'slot'


def test_every_pcie_generation():
    per_lane = {1: 250.0, 2: 500.0, 3: 984.615, 4: 1969.23, 5: 3938.46, 6: 7562.5}
    for gen, mbs in per_lane.items():
        got, how = linkpeak.pcie_mbs({'gen': gen, 'lanes': 16})
        assert got == pytest.approx(16 * mbs, rel=1e-5), gen
        assert how == f'PCIe gen{gen} x16'


def test_peaks_given_directly_and_a_data_fraction():
    peak = peak_of({'link_peak_mbs': 12000, 'pcie_peak_mbs': 10000})
    assert (peak.peak_mbs, peak.limited_by) == (10000.0, 'slot')
    peak = peak_of({'link': {'rate_gbps': 10, 'encoding': 0.8}})
    assert peak.peak_mbs == pytest.approx(1000.0)
    assert peak_of({'link_peak_mbs': 5000}).as_dict() == {
        'link_mbs': 5000.0,
        'slot_mbs': None,
        'peak_mbs': 5000.0,
        'limited_by': 'link',
        'how': 'link declared = 5000 MB/s; peak 5000 MB/s (link)',
    }


def test_no_declared_link_means_no_efficiency_and_says_why():
    peak, reason = linkpeak.from_extras({'mem_per_node': 1}, 'partition p:q')
    assert peak is None
    assert reason == (
        'partition p:q: no link peak declared (extras.link or extras.link_peak_mbs)'
    )
    peak, reason = linkpeak.from_extras({'pcie': {'gen': 4, 'lanes': 16}}, 'p')
    assert peak is None and 'a PCIe slot alone does not bound the link' in reason
    assert linkpeak.from_extras(None)[0] is None


@pytest.mark.parametrize(
    'extras, message',
    [
        (
            {'link': {'rate_gbps': 10}},
            r'extras\.link: encoding is required with rate_gbps',
        ),
        (
            {'link': {'rate_gbps': 10, 'encoding': '8b9b'}},
            r"extras\.link\.encoding: unknown encoding '8b9b'",
        ),
        (
            {'link': {'rate_gbps': 10, 'lane_gbps': 2.5, 'encoding': '8b10b'}},
            r'give exactly one of rate_gbps',
        ),
        (
            {'link': {'rate_gpbs': 10, 'encoding': '8b10b'}},
            r'extras\.link: unknown key\(s\) rate_gpbs',
        ),
        ({'link': {'data_gbps': -1}}, r'extras\.link\.data_gbps: expected a positive'),
        ({'link': {'data_gbps': True}}, r'expected a positive number, got True'),
        (
            {'link': {'data_gbps': 100, 'encoding': '64b66b'}},
            r'data_gbps is after encoding',
        ),
        ({'link': {'rate_gbps': 10, 'encoding': 1.25}}, r'at most 1'),
        ({'link': 10}, r'extras\.link: expected a mapping'),
        (
            {'link_peak_mbs': 1000, 'pcie': {'gen': 7, 'lanes': 8}},
            r'extras\.pcie\.gen: PCIe generation 7 unknown',
        ),
        (
            {'link_peak_mbs': 1000, 'pcie': {'gen': 3, 'lanes': 0}},
            r'extras\.pcie\.lanes: expected a lane count',
        ),
        (
            {'link_peak_mbs': 1000, 'link': {'data_gbps': 8}},
            r'both link and link_peak_mbs',
        ),
    ],
)
def test_malformed_declarations_name_the_partition_and_key(extras, message):
    with pytest.raises(LinkPeakError, match=message) as err:
        linkpeak.from_extras(extras, 'partition p:q')
    assert str(err.value).startswith('partition p:q: ')
    assert '\n' not in str(err.value)

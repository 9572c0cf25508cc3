"""The rule of three sessions, everywhere (issue 40, item 7).

`references update` writes no band that fewer than 3 undisturbed sessions
back unless --force, by baseline's rule (one line, exit 2, nothing written),
and what it writes has baseline's floor of each kind of figure. A band wider
than ±100 % judges nothing: it is never written nor shipped; its figure stays
context (its provenance says what the band would have been) and `references
show` says why.
"""

import csv
import io
import json
import os
import re
import shutil

import yaml
from badinput import hashes
from conftest import FIXTURES, PROJECT, require_fixtures
from rfm import clusterbench

from clusterbench.references import floors
from clusterbench.references import provenance as refprov
from clusterbench.references import validate as refdata

SHIPPED = os.path.join(PROJECT, 'reference_data')
#: The healthy Zen 4 session of the issue: one session of every check.
ZEN4 = os.path.join(FIXTURES, 'sessions', 'AMD-25-17', 'report.json')
#: What baseline's rule says of the figures short of sessions.
SHORT = (
    r'(\d+) of \1 figures have fewer than 3 undisturbed sessions '
    r'\(fewest (\d+): [^;]+; \d+ in all\)'
)


def one_line(result):
    assert 'Traceback' not in result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def case(values, units, test='T'):
    """One verified test case of *test* on local:default."""
    return {
        'display_name': test,
        'unique_name': test,
        'system': 'local',
        'partition': 'default',
        'environ': 'gnu-openmpi',
        'result': 'pass',
        'fixture': False,
        'reference_file': 'x.yaml',
        'reference_index': ['$partition', '$environ', '$processor.model'],
        'processor_facts': {'model': 'AMD EPYC', 'num_cpus': 2},
        'job_nodelist': ['n1'],
        'perfvalues': {
            f'local:default:{k}': [v, 0, None, None, units[k], 'pass']
            for k, v in values.items()
        },
    }


def sessions(tmp_path, per_session, units, name='s', test='T'):
    """One report per session (its own uuid), each one case of *test*."""
    paths = []
    for i, values in enumerate(per_session):
        path = tmp_path / f'{name}{i}.json'
        data = {
            'session_info': {'uuid': f'{name}-session{i}', 'num_cases': 1},
            'runs': [{'testcases': [case(values, units, test)]}],
        }
        path.write_text(json.dumps(data))
        paths.append(str(path))
    return paths


def update(refs, *reports, options=()):
    return clusterbench(
        'references', 'update', '--references', str(refs), *options,
        '--from', *reports,
    )  # fmt: skip


def written_bands(refs):
    """(test, params, figure, entry) of every reference entry under *refs*."""
    for directory, _, files in os.walk(refs):
        if os.path.basename(directory) == refprov.PROVENANCE_DIR:
            continue
        for name in sorted(f for f in files if f.endswith('.yaml')):
            data = yaml.safe_load(open(os.path.join(directory, name)))
            for test, index, key, leaf in refprov.entries(data):
                for figure, entry in leaf.items():
                    yield test, dict(zip(index, key)), figure, entry


# -- fewer than three sessions -----------------------------------------------


def test_one_real_session_writes_nothing_without_force(tmp_path):
    # The issue: one session replaced ±19-55 % bands with ±3 % ones.
    require_fixtures()
    refs = tmp_path / 'refs'
    shutil.copytree(SHIPPED, refs)
    before = hashes(refs)
    refused = update(refs, ZEN4, options=['--write'])
    assert refused.returncode == 2, refused.stdout + refused.stderr
    line = one_line(refused)
    assert re.fullmatch(
        'clusterbench: error: references update: ' + SHORT + r'; 3 are needed: give '
        r'more sessions to --from \(`clusterbench baseline` records them\), or '
        r'write these with --force; nothing was written',
        line,
    ), line
    assert re.search(r'\(fewest 1: ', line)
    assert hashes(refs) == before
    # The proposal was shown before the refusal, as baseline shows it.
    assert '  ~ HPCCCheck hpl_order=10368 / stream_star_triad: ' in refused.stdout


def test_the_refusal_is_baselines_rule(tmp_path):
    # One rule: the same reports are as short of sessions for both commands.
    require_fixtures()
    refs = tmp_path / 'refs'
    shutil.copytree(SHIPPED, refs)
    refused = update(refs, ZEN4, options=['--write'])
    base = clusterbench(
        'baseline', '--dry-run', '--sessions', '0', '--references', str(refs),
        '--from', ZEN4,
    )  # fmt: skip
    assert base.returncode == 0, base.stderr
    theirs = re.search(SHORT, base.stdout)
    ours = re.search(SHORT, refused.stderr)
    assert theirs and ours and theirs.group(0) == ours.group(0)


def test_two_sessions_are_refused_and_three_are_written(tmp_path):
    refs = tmp_path / 'refs'
    units = {'bandwidth': 'GB/s'}
    paths = sessions(tmp_path, [{'bandwidth': v} for v in (10.0, 10.2, 10.1)], units)
    two = update(refs, *paths[:2], options=['--write'])
    assert two.returncode == 2
    assert one_line(two) == (
        'clusterbench: error: references update: 1 of 1 figures have fewer than '
        '3 undisturbed sessions (fewest 2: T / bandwidth; 2 in all); 3 are '
        'needed: give more sessions to --from (`clusterbench baseline` records '
        'them), or write these with --force; nothing was written'
    )
    assert not refs.exists()
    # A dry run says it, and what --write would do.
    dry = update(refs, *paths[:2])
    assert dry.returncode == 0, dry.stderr
    assert (
        'warning: references update: 1 of 1 figures have fewer than 3 undisturbed '
        'sessions (fewest 2: T / bandwidth; 2 in all); --write refuses '
        'them without --force'
    ) in dry.stdout
    three = update(refs, *paths, options=['--write'])
    assert three.returncode == 0, three.stderr
    # No shortfall (a band wider than 10 % is still named: a `check` warning).
    assert 'warning: references update' not in three.stdout
    assert refdata.check_file(str(refs / 'local' / 'x.yaml')) == {'T': 1}


def test_forced_bands_have_baselines_floor_of_their_kind(tmp_path):
    # --force writes one session's bands, never narrower than a baseline's.
    require_fixtures()
    refs = tmp_path / 'refs'
    forced = update(refs, ZEN4, options=['--write', '--force'])
    assert forced.returncode == 0, forced.stderr
    assert re.search(
        'warning: references update: ' + SHORT + r'; written with --force, each '
        r'band at least the floor of its kind of figure',
        forced.stdout,
    ), forced.stdout
    bands = list(written_bands(refs))
    assert len(bands) > 100
    for test, params, figure, entry in bands:
        floor, kind = floors.floor_of(test, figure, entry[3], params)
        assert entry[2] >= floor, (test, params, figure, entry, kind)
        assert entry[1] <= -floor, (test, params, figure, entry, kind)
    # The STREAM triad: ±3 % from one session before, now its kind's.
    triads = [e for _, _, f, e in bands if f == 'stream_star_triad']
    assert triads and all(e[2] == floors.FLOORS['memory bandwidth'] for e in triads)
    checked = clusterbench('references', 'check', '--references', str(refs))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_forced_floor_is_the_kinds_whatever_floor_is_asked(tmp_path):
    refs = tmp_path / 'refs'
    paths = sessions(tmp_path, [{'hpl': 90.0}], {'hpl': 'GFlop/s'})
    forced = update(refs, *paths, options=['--write', '--force', '--floor', '0.03'])
    assert forced.returncode == 0, forced.stderr
    assert '/ hpl: 90 GFlop/s ±8 % (n=1 in 1 session' in forced.stdout
    ((_, _, _, entry),) = written_bands(refs)
    assert entry == [90.0, -0.08, 0.08, 'GFlop/s']


# -- a band wider than ±100 % ------------------------------------------------


#: NetPIPE's intra-node bandwidth in its two modes, and a steady latency.
BIMODAL = [
    {'bandwidth_1MiB': 2200.0, 'latency_1B': 0.44},
    {'bandwidth_1MiB': 2250.0, 'latency_1B': 0.45},
    {'bandwidth_1MiB': 8600.0, 'latency_1B': 0.44},
]
NETPIPE_UNITS = {'bandwidth_1MiB': 'MB/s', 'latency_1B': 'us'}
#: A check that exists (`references check` names entries of others stale).
NETPIPE = 'NetPIPECheck'


def test_a_band_wider_than_100_percent_is_written_as_context(tmp_path):
    refs = tmp_path / 'refs'
    paths = sessions(tmp_path, BIMODAL, NETPIPE_UNITS, test=NETPIPE)
    wrote = update(refs, *paths, options=['--write'])
    assert wrote.returncode == 0, wrote.stderr
    (line,) = [x for x in wrote.stdout.splitlines() if 'bandwidth_1MiB' in x]
    assert re.fullmatch(
        r'  \+ NetPIPECheck / bandwidth_1MiB: 2250 MB/s context only: band would be '
        r'-100 %\.\.\+\d+ % \(wider than ±100 %\) \(n=3 in 3 sessions, .+\)',
        line,
    ), line
    leaf = yaml.safe_load((refs / 'local' / 'x.yaml').read_text())[NETPIPE]
    leaf = leaf['local:default']['gnu-openmpi']['AMD EPYC']
    # ReFrame reads no band for it: never judged, shown as measured.
    assert set(leaf) == {'latency_1B'}
    prov = yaml.safe_load((refs / 'local' / 'provenance' / 'x.yaml').read_text())
    (entry,) = prov[NETPIPE].values()
    kept = refprov.figures(entry)['bandwidth_1MiB']
    assert re.fullmatch(
        r'band would be -100 %\.\.\+\d+ % \(wider than ±100 %\)', kept['context_only']
    )
    assert kept['sessions'] == 3 and sorted(kept['session_medians']) == [
        2200.0,
        2250.0,
        8600.0,
    ]
    checked = clusterbench('references', 'check', '--references', str(refs))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shown = clusterbench('references', 'show', '--references', str(refs))
    assert shown.returncode == 0, shown.stderr
    (row,) = [x for x in shown.stdout.splitlines() if 'bandwidth_1MiB' in x]
    assert re.fullmatch(
        r'    bandwidth_1MiB\s+2250 MB/s\s+.*context only: band would be '
        r'-100 %\.\.\+\d+ % \(wider than ±100 %\)',
        row,
    ), row


def test_an_entry_of_context_figures_only_is_no_reference_entry(tmp_path):
    refs = tmp_path / 'refs'
    only_wide = [{'bandwidth_1MiB': b['bandwidth_1MiB']} for b in BIMODAL]
    paths = sessions(tmp_path, only_wide, NETPIPE_UNITS, test=NETPIPE)
    wrote = update(refs, *paths, options=['--write'])
    assert wrote.returncode == 0, wrote.stderr
    data = yaml.safe_load((refs / 'local' / 'x.yaml').read_text())
    assert data == {NETPIPE: {'$index': ['$partition', '$environ', '$processor.model']}}
    checked = clusterbench('references', 'check', '--references', str(refs))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shown = clusterbench('references', 'show', '--references', str(refs))
    assert 'context only: band would be -100 %..+' in shown.stdout, shown.stdout
    # A later update with a band that judges replaces the context.
    steady = [{'bandwidth_1MiB': 2200.0 + i} for i in range(3)]
    steady = sessions(tmp_path, steady, NETPIPE_UNITS, name='later', test=NETPIPE)
    again = update(refs, *steady, options=['--write'])
    assert again.returncode == 0, again.stderr
    ((_, _, _, entry),) = written_bands(refs)
    assert entry[0] == 2201.0 and entry[2] <= 1.0
    shown = clusterbench('references', 'show', '--references', str(refs))
    assert 'context only' not in shown.stdout


def test_no_shipped_band_is_wider_than_100_percent():
    from clusterbench.references import widebands

    found = [
        (test, params, figure, entry)
        for test, params, figure, entry in written_bands(SHIPPED)
        if widebands.too_wide(figure, refdata.unit_of(entry), entry)
    ]
    assert found == []
    checked = clusterbench('references', 'check', '--references', SHIPPED)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_shipped_netpipe_of_zen4_is_context_and_show_says_why():
    shown = clusterbench(
        'references', 'show', '--references', SHIPPED, '--system', 'local'
    )
    assert shown.returncode == 0, shown.stderr
    rows = [
        x for x in shown.stdout.splitlines() if x.startswith('    ') and 'context' in x
    ]
    assert len(rows) == 8, rows
    assert 'CPU AMD-25-17: 104 reference figure(s) and 8 context only' in shown.stdout
    assert any(
        re.fullmatch(
            r'    n_half\s+1016 B\s+.*context only: band would be -100 %\.\.\+161755 % '
            r'\(wider than ±100 %\)',
            row,
        )
        for row in rows
    ), rows


def test_the_zen4_session_reads_netpipe_as_context_not_faster():
    # The issue: +292 % `FASTER (reference stale?)` against 0..8723 MB/s.
    require_fixtures()
    compared = clusterbench('compare', '--references', SHIPPED, '--format', 'csv', ZEN4)
    assert 'Traceback' not in compared.stderr
    rows = [
        row
        for row in csv.DictReader(io.StringIO(compared.stdout))
        if row['test'].startswith('NetPIPECheck') and row['value'] != '-'
    ]
    assert len(rows) == 8, compared.stdout + compared.stderr
    assert {row['verdict'] for row in rows} == {'no reference'}, rows


def at(tree, where):
    """The level of a parsed reference file at a joined key (keys as text)."""
    for key in where.split('/'):
        tree = next(v for k, v in tree.items() if str(k) == key)
    return tree


def test_demote_wide_moves_a_stored_wide_band_into_context(tmp_path):
    # A reference directory written before the rule: one band made wide,
    # its provenance consistent (references check is ok).
    refs = tmp_path / 'refs'
    shutil.copytree(SHIPPED, refs)
    path = refs / 'local' / 'netpipe.yaml'
    prov_path = refs / 'local' / 'provenance' / 'netpipe.yaml'
    data, prov = yaml.safe_load(path.read_text()), yaml.safe_load(prov_path.read_text())
    where = (
        'local:default/gnu-openmpi/icelake/Intel(R) Xeon(R) Processor/'
        'Intel-6-207/2/bidir/intra'
    )
    leaf = at(data['NetPIPECheck'], where)
    leaf['n_half'] = [32100.0, -1.0, 1.6, 'B']
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    last = prov['NetPIPECheck'][where][-1]
    last['entry_sha256'] = refprov.entry_hash(leaf)
    last['figures']['n_half']['reference'] = [32100.0, -1.0, 1.6, 'B']
    prov_path.write_text(yaml.safe_dump(prov, sort_keys=False))
    checked = clusterbench('references', 'check', '--references', str(refs))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    before = hashes(refs)
    dry = clusterbench('references', 'demote-wide', '--references', str(refs))
    assert dry.returncode == 0, dry.stderr
    assert hashes(refs) == before
    assert re.search(
        r'^NetPIPECheck mode=bidir placement=intra / n_half \(local:default, '
        r'gnu-openmpi, CPU Intel-6-207 .*\): context only: band would be '
        r'-100 %\.\.\+160 % \(wider than ±100 %\)$',
        dry.stdout,
        re.M,
    ), dry.stdout
    assert '(dry run: nothing written; add --write to apply)' in dry.stdout
    done = clusterbench(
        'references', 'demote-wide', '--references', str(refs), '--write'
    )
    assert done.returncode == 0, done.stderr
    assert f'wrote {path}' in done.stdout
    leaf = at(yaml.safe_load(path.read_text())['NetPIPECheck'], where)
    assert set(leaf) == {'bandwidth_1MiB', 'bandwidth_peak'}
    checked = clusterbench('references', 'check', '--references', str(refs))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shown = clusterbench('references', 'show', '--references', str(refs))
    assert '-100 %..+160 % (wider than ±100 %)' in shown.stdout
    # Nothing is left to demote: a second run changes nothing.
    after = hashes(refs)
    again = clusterbench(
        'references', 'demote-wide', '--references', str(refs), '--write'
    )
    assert again.returncode == 0, again.stderr
    assert hashes(refs) == after

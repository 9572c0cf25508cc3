"""NPB output parser and sanity on the real NPB 3.4.2 outputs of ../shared/fixtures.

Every recorded run (classes S-C, quiet and contended) verifies and yields its
figures; the negative samples (failed verification, unknown class, killed run)
and doctored copies of real outputs never do.
"""

import glob
import os
import re

import pytest
from conftest import FIXTURES, read

from clusterbench.bench import npb_rules
from clusterbench.parsers import npb

NPB = os.path.join(FIXTURES, 'npb')


def _outputs(sub=''):
    return sorted(glob.glob(os.path.join(NPB, sub, '*.out')))


def _request(path):
    bench, cls, nprocs = os.path.basename(path).split('.')[:3]
    return bench, cls, int(nprocs)


@pytest.fixture
def cg_b(fixtures_dir):
    return read(os.path.join(fixtures_dir, 'npb', 'cg.B.2.out'))


@pytest.mark.parametrize(
    'path', _outputs() + _outputs('contended'), ids=os.path.basename
)
def test_every_recorded_run_verifies(path):
    bench, cls, nprocs = _request(path)
    result = npb.verify(read(path), path, bench, cls, nprocs)
    assert result['benchmark'] == bench and result['class'] == cls
    assert result['total_processes'] == result['active_processes'] == nprocs
    assert result['size'] == npb_rules.problem(bench, cls)['size']
    figures = npb.figures(result)
    assert set(figures) == {'mops_total', 'mops_per_process', 'time'}
    assert figures['mops_total'][1] == 'Mop/s' and figures['time'][1] == 's'
    assert figures['mops_total'][0] > 0


def test_figures_agree_with_runs_csv(fixtures_dir):
    with open(os.path.join(fixtures_dir, 'npb', 'runs.csv')) as f:
        rows = [line.strip().split(',') for line in f][1:]
    assert len(rows) == len(_outputs())
    for bench, cls, nprocs, _, _, npb_time, mops, verdict, *_ in rows:
        path = os.path.join(fixtures_dir, 'npb', f'{bench}.{cls}.{nprocs}.out')
        result = npb.verify(read(path), path, bench, cls, int(nprocs))
        assert verdict == result['verification'] == 'SUCCESSFUL'
        assert result['mops_total'] == float(mops)
        assert result['time'] == float(npb_time)
        per_process = result['mops_per_process'] * int(nprocs)
        assert per_process == pytest.approx(float(mops), rel=1e-4)


def test_all_recorded_classes_and_benchmarks_are_covered():
    seen = {_request(p)[:2] for p in _outputs()}
    assert {b for b, _ in seen} == set(npb_rules.BENCHMARKS)
    assert {c for _, c in seen} == {'S', 'W', 'A', 'B', 'C'}


@pytest.mark.parametrize(
    'name, message',
    [
        ('cg.S.2.verification-failed.out', 'NPB verification UNSUCCESSFUL'),
        ('cg.S.2.unknown-class.out', 'NPB verification UNSUCCESSFUL'),
        ('mg.S.2.unknown-class.out', 'NPB verification UNSUCCESSFUL'),
        ('cg.B.2.killed-after-6s.out', 'no NPB closing report'),
    ],
)
def test_negative_samples_yield_no_figure(fixtures_dir, name, message):
    path = os.path.join(fixtures_dir, 'npb', 'negative', name)
    bench, cls, nprocs = _request(path)
    with pytest.raises(npb.NPBParseError, match=re.escape(f'{name}: {message}')):
        npb.verify(read(path), name, bench, cls, nprocs)
    # Not even a lenient caller that asks for nothing gets a figure.
    with pytest.raises(npb.NPBParseError):
        npb.verify(read(path), name)


def test_unknown_class_is_refused_even_if_reported_successful(fixtures_dir):
    path = os.path.join(fixtures_dir, 'npb', 'negative', 'cg.S.2.unknown-class.out')
    text = read(path).replace('UNSUCCESSFUL', '  SUCCESSFUL')
    with pytest.raises(npb.NPBParseError, match="unknown NPB class 'U'"):
        npb.verify(text, 'x.out')


def test_errors_are_one_line_naming_the_source(cg_b):
    for bad in (cg_b[:200], cg_b.replace('Mop/s total', 'Mop/s totl')):
        with pytest.raises(npb.NPBParseError) as err:
            npb.verify(bad, 'rfm_job.out')
        assert str(err.value).startswith('rfm_job.out: ')
        assert '\n' not in str(err.value)


@pytest.mark.parametrize(
    'request_, message',
    [
        (('bt', 'B', 2), 'benchmark CG, BT requested'),
        (('cg', 'C', 2), 'class B, class C requested'),
        (('cg', 'B', 4), 'ran on 2 processes, 4 requested'),
    ],
)
def test_run_must_be_the_one_requested(cg_b, request_, message):
    with pytest.raises(npb.NPBParseError, match=message):
        npb.verify(cg_b, 'cg.out', *request_)


def test_idle_processes_are_refused(fixtures_dir):
    text = read(os.path.join(fixtures_dir, 'npb', 'bt.A.4.out'))
    # What NPB 3.4 prints for BT on 5 processes: one left idle.
    idle = text.replace('Total processes =                        4',
                        'Total processes =                        5')  # fmt: skip
    with pytest.raises(npb.NPBParseError, match='only 4 of 5 processes were active'):
        npb.verify(idle, 'bt.out', 'bt', 'A', 5)


def test_banner_and_report_must_name_the_same_benchmark(cg_b):
    text = cg_b.replace('-- CG Benchmark', '-- MG Benchmark')
    with pytest.raises(npb.NPBParseError, match='benchmark MG, CG requested'):
        npb.verify(text, 'cg.out', 'cg', 'B', 2)


def test_two_closing_reports_are_refused(cg_b):
    with pytest.raises(npb.NPBParseError, match='2 NPB closing reports'):
        npb.verify(cg_b + cg_b, 'cg.out', 'cg', 'B', 2)


@pytest.mark.parametrize(
    'name, old, new, message',
    [
        ('cg.B.2.out', 'Zeta is     0.2271274548263E+02',
         'Zeta is     0.2271274558263E+02', 'zeta 22.71274558263'),
        ('mg.A.2.out', 'L2 Norm is  0.2433365309069E-05',
         'L2 Norm is  0.2433385309069E-05', 'L2 norm'),
        ('ep.A.2.out', 'No. Gaussian Pairs =     210832767.',
         'No. Gaussian Pairs =     210832867.', 'Gaussian pairs'),
        ('ft.A.2.out', '5.091487099959D+02    5.107917842803D+02',
         '5.091487099959D+02    5.107917842903D+02', 'checksum 6'),
        ('bt.A.4.out', '0.1080634671464E+03 0.1080634671464E+03',
         '0.1080634671464E+03 0.1080634671564E+03', 'residual reference 1'),
        ('lu.W.2.out', '0.1161399311023E+02 0.1161399311023E+02',
         '0.1161409311023E+02 0.1161399311023E+02', 'surface integral'),
        ('sp.S.1.out', 'dt:   0.0150000', 'dt:   0.0150100', 'time step'),
        ('is.A.2.out', 'Size            =                  8388608',
         'Size            =                  8388609', 'size 8388609'),
        ('lu.A.2.out', 'Iterations      =                      250',
         'Iterations      =                      200', '200 iterations'),
    ],
)  # fmt: skip
def test_values_must_be_the_official_ones(fixtures_dir, name, old, new, message):
    text = read(os.path.join(fixtures_dir, 'npb', name))
    assert old in text
    bench, cls, nprocs = _request(name)
    # NPB still says SUCCESSFUL: only the cross-check can catch it.
    with pytest.raises(npb.NPBParseError, match=re.escape(message)):
        npb.verify(text.replace(old, new), name, bench, cls, nprocs)


def test_ep_sums_are_held_to_342_only(fixtures_dir):
    text = read(os.path.join(fixtures_dir, 'npb', 'ep.A.2.out'))
    # What NPB 3.4.0 prints: its own sums, the same Gaussian pairs.
    old_sums = text.replace(
        'Sums =     1.682235632304649D+08    1.682195123368260D+08',
        'Sums =    -4.295875165638687D+03   -1.580732573678578D+04',
    )
    with pytest.raises(npb.NPBParseError, match='sum x -4295.87'):
        npb.verify(old_sums, 'ep.out', 'ep', 'A', 2)  # claims 3.4.2
    old = old_sums.replace('3.4.2', '3.4')
    assert npb.verify(old, 'ep.out', 'ep', 'A', 2)
    wrong_pairs = old.replace('210832767.', '210832867.')
    with pytest.raises(npb.NPBParseError, match='Gaussian pairs'):
        npb.verify(wrong_pairs, 'ep.out', 'ep', 'A', 2)


def _md_values():
    """Official values straight from verification-values.md, parsed here."""
    text = read(os.path.join(NPB, 'verification-values.md'))

    def num(s):
        return float(s.replace('D', 'e').replace('d', 'e'))

    found = {}
    cg = text.split('## CG')[1].split('## EP')[0]
    for cls, zeta in re.findall(r'- (\w): zeta = (\S+)', cg):
        found[('cg', cls, 'zeta')] = num(zeta)
    ep = text.split('## EP')[1].split('## FT')[0]
    for cls, sx, sy, gc in re.findall(
        r'- (\w) \(M=\d+\): sx = (\S+), sy = (\S+), gc = (\S+)', ep
    ):
        found.update({('ep', cls, 'sx'): num(sx), ('ep', cls, 'sy'): num(sy)})
        found[('ep', cls, 'gc')] = num(gc)
    mg = text.split('## MG')[1].split('## LU, BT, SP')[0]
    for cls, rnm2 in re.findall(r'- (\w): rnm2 = (\S+)', mg):
        found[('mg', cls, 'rnm2')] = num(rnm2)
    ft = text.split('## FT')[1].split('## IS')[0]
    for block in ft.split('- class ')[1:]:
        last = re.findall(r'- (\d+): \((\S+), (\S+)\)', block)[-1]
        found[('ft', block[0], 'checksum')] = (num(last[1]), num(last[2]))
    for bench in ('lu', 'bt', 'sp'):
        sec = text.split(f'## {bench.upper()}/verify.f90')[1].split('## ')[0]
        for block in sec.split('\n class ')[1:]:
            cls = block[0]
            xcr = re.findall(r'xcrref\(\d\)\s+= (\S+)', block)
            xce = re.findall(
                r'xceref\(\d\)(?: \[iotype=0, plain BT\])?\s+= (\S+)', block
            )
            found[(bench, cls, 'residual')] = tuple(map(num, xcr))
            found[(bench, cls, 'error')] = tuple(map(num, xce))
            found[(bench, cls, 'dt')] = num(re.search(r'dtref\s+= (\S+)', block)[1])
            xci = re.search(r'xciref\s+= (\S+)', block)
            if xci:
                found[(bench, cls, 'surface')] = num(xci[1])
    return found


def test_official_table_is_verification_values_md(fixtures_dir):
    expected = _md_values()
    ours = {
        (bench, cls, key): value
        for bench, classes in npb_rules.OFFICIAL_VALUES.items()
        for cls, values in classes.items()
        for key, value in values.items()
        if key != 'iteration'
    }
    assert ours == expected
    for cls, values in npb_rules.OFFICIAL_VALUES['ft'].items():
        assert values['iteration'] == npb_rules.problem('ft', cls)['iterations']


def test_documented_sizes_are_those_of_verification_values_md(fixtures_dir):
    text = read(os.path.join(NPB, 'verification-values.md'))
    cg = re.search(r'write_cg_info\): (.*)', text)[1]
    for cls, na, nonzer, niter in re.findall(r'(\w) (\d+)/(\d+)/(\d+)', cg):
        assert npb_rules.CG[cls] == (int(na), int(nonzer), int(niter))
    for cls, m in re.findall(r'- (\w) \(M=(\d+)\)', text):
        assert npb_rules.EP[cls] == int(m)
    mg = text.split('## MG')[1].split('## LU')[0]
    for cls, edge, nit in re.findall(r'(\w) (\d+)\^3 (?:nit=)?(\d+)', mg):
        assert npb_rules.MG[cls] == (int(edge), int(nit))
    ft = re.search(r'Problem sizes: (S 64x64x64.*)', text)[1]
    for cls, nx, ny, nz, niter in re.findall(
        r'(\w) (\d+)x(\d+)x(\d+) (?:niter=)?(\d+)', ft
    ):
        assert npb_rules.FT[cls] == (int(nx), int(ny), int(nz), int(niter))
    cfd = re.search(r'Problem sizes \(setparams.c\): (.*)', text)[1]
    for bench, part in zip(('bt', 'sp', 'lu'), re.split(r'\. (?=SP|LU)', cfd)):
        for cls, edge, steps in re.findall(r'(\w) (\d+)\^3 \S+ (\d+)', part):
            assert npb_rules.GRID[bench][cls] == (int(edge), int(steps)), (bench, cls)

"""The report rendered: HTML, SVG plots and CSVs from assembled test cases.

Fast: no ReFrame run. The cases are those of tests/report/test_report_assemble.py
(ReFrame-shaped, with what the plugins keep); these tests read what
`render.write` and `plots.make_all` make of them.
"""

import base64
import csv
import io
import os
import re

from test_report_assemble import EVIL, build, case

from clusterbench.report import plots, render


def svgs(html):
    return [
        base64.b64decode(m).decode()
        for m in re.findall(r'data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)', html)
    ]


def test_names_from_the_data_are_text_in_html_and_svg(tmp_path):
    data = build(
        case(system=EVIL, partition='p$1$x', environ='gnu-openmpi',
             name='CGSolverCheck', figures={'gflops': 5.0}),
        case(system='local', environ='gnu-mpich', name='CGSolverCheck',
             figures={'gflops': 4.0}),
    )  # fmt: skip
    html_path, _, made, _ = render.write(data, tmp_path / 'report.html')
    html = open(html_path, encoding='utf-8').read()
    assert '<script' not in html.lower()
    assert '&lt;script&gt;alert(1)&lt;/script&gt;' in html
    # The bar chart, and the executive page's charts that name the systems.
    drawn = svgs(html)
    assert len(drawn) == len(made) and len(drawn) >= 2
    for svg in drawn:
        assert '<script' not in svg.lower()
    (bars,) = [p.svg.decode() for p in made if p.id.startswith('bars-')]
    assert '&lt;script&gt;alert(1)&lt;/script&gt;' in bars
    assert 'p$1$x' in bars  # a dollar is a dollar, not mathtext
    (against,) = [p.svg.decode() for p in made if p.id.startswith('executive-headline')]
    assert '&lt;script&gt;alert(1)&lt;/script&gt;' in against


def test_missing_is_drawn_and_written_as_missing_never_zero(tmp_path):
    data = build(
        case(environ='gnu-openmpi', name='CGSolverCheck', figures={'gflops': 5.0}),
        case(environ='gnu-mpich', name='CGSolverCheck', result='fail',
             fail_phase='sanity', fail_reason='verification failed'),
        case(environ='intel-impi', name='HPCCCheck', figures={'hpl': 3.0}),
    )  # fmt: skip
    _, data_dir, made, _ = render.write(data, tmp_path / 'report.html')
    (bars,) = [p for p in made if 'gflops' in p.id]
    rows = list(csv.DictReader(io.StringIO(bars.csv_text)))
    states = {r['label'].split(' · ')[1]: r for r in rows}
    assert states['gnu-openmpi']['value'] == '5.0'
    assert (
        states['gnu-mpich']['value'] == ''
        and states['gnu-mpich']['verdict'] == 'FAILED'
    )
    assert states['intel-impi']['value'] == ''
    assert states['intel-impi']['verdict'] == 'missing'
    svg = bars.svg.decode()
    assert 'FAILED (sanity)' in svg and 'missing' in svg
    with open(os.path.join(data_dir, bars.csv_name)) as f:
        assert f.read() == bars.csv_text


def test_empty_input_renders_every_section_with_its_reason(tmp_path):
    data = build()
    html_path, _, made, _ = render.write(data, tmp_path / 'empty.html')
    html = open(html_path, encoding='utf-8').read()
    assert not made
    assert html.count('<strong>No data.</strong>') >= 6
    assert 'the inputs hold no figure' in html


def test_plots_in_worker_processes_are_the_plots_drawn_here():
    data = build(
        *(
            case(environ=f'e{i}', name=name, figures={var: (10.0 + i, unit)})
            for i in range(3)
            for name, var, unit in (
                ('CGSolverCheck %variant=a', 'gflops', 'GFlop/s'),
                ('CGSolverCheck %variant=b', 'gflops', 'GFlop/s'),
                ('HPCCCheck', 'hpl', 'GFlop/s'),
                ('HPCCCheck', 'stream_star_triad', 'GB/s'),
                ('StreamCheck', 'stream_triad', 'GB/s'),
                ('HPCGCheck', 'gflops', 'GFlop/s'),
            )
        )
    )
    _, serial = plots.make_all(data, workers=1)
    _, parallel = plots.make_all(data, workers=2)
    assert len(serial) >= plots.PARALLEL_FROM
    assert [(p.id, p.csv_text, p.svg) for p in serial] == [
        (p.id, p.csv_text, p.svg) for p in parallel
    ]

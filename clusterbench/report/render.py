"""Rendering the report: one self-contained HTML file and the CSV of every plot.

The HTML comes from a Jinja2 template with autoescaping on (every string from
the data is escaped), plots are embedded as ``data:`` URIs of matplotlib's
SVG, and nothing refers to the network.
"""

import io
import math
import os
import tempfile

import jinja2

from clusterbench.core import csvfile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import trend, view
from clusterbench.parsers.catalog import CATALOG
from clusterbench.report import assemble as model
from clusterbench.report import exectable, executive, headline, heap, verdictcolours
from clusterbench.report import plots as plotlib
from clusterbench.report.plotkit import VERDICT_COLUMNS, csv_of, verdict_values

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'templates')


def environment():
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters['num'] = _num
    env.filters['pct'] = _pct
    env.filters['state_class'] = verdictcolours.css_class
    env.filters['bounds'] = _bounds
    env.filters['tolerance'] = _tolerance
    env.filters['headline'] = exectable.text
    return env


def _num(value, digits=4):
    if value is None:
        return '—'
    if isinstance(value, float) and math.isinf(value):
        return '∞' if value > 0 else '-∞'
    return f'{value:.{digits}g}'


def _pct(value):
    return '—' if value is None else f'{value * 100:.1f}%'


def _bounds(cell):
    allowed = cell.allowed
    if allowed is None:
        return '—'
    return f'{_num(allowed[0])} .. {_num(allowed[1])}'


def _tolerance(cell):
    def one(t):
        return '—' if t is None else f'{t * 100:+.1f}%'

    ref = cell.ref
    return f'{one(ref and ref.lower)} / {one(ref and ref.upper)}'


def summary_csv(data):
    """The summary matrix in long form: one row per configuration and figure."""
    out = io.StringIO()
    writer = csvfile.writer(out, lineterminator='\n')
    writer.writerow(
        (
            'config',
            'label',
            'test',
            'variable',
            'value',
            'samples',
            *VERDICT_COLUMNS,
            'reason',
            'disturbed_left_out',
            'disturbed_values',
        )
    )
    for bench in data.benchmarks:
        for cell in data.row(bench):
            writer.writerow(
                [
                    '' if v is None else v
                    for v in (
                        cell.config.id,
                        cell.config.label,
                        bench.test,
                        bench.variable,
                        cell.value,
                        len(cell.values) or None,
                        *verdict_values(cell),
                        cell.reason or None,
                        len(cell.disturbed),
                        ' '.join(repr(v) for v in cell.disturbed) or None,
                    )
                ]
            )
    return out.getvalue()


def executive_csv(data):
    """The executive page as CSV: one row per system:partition."""
    page = data.executive
    rows = exectable.csv_rows(page) if page is not None else [['system']]
    return csv_of(rows[0], rows[1:])


def render(data, sections, data_dir):
    """The HTML text of the report."""
    template = environment().get_template('report.html.j2')
    families = []
    for family, bench, plot in sections['applications']:
        if not families or families[-1][0] != family:
            families.append((family, []))
        families[-1][1].append((bench, plot))
    groups = []
    for bench in data.benchmarks:
        if not groups or groups[-1][0] != bench.base:
            groups.append((bench.base, []))
        groups[-1][1].append(bench)
    with heap.paused():
        return template.render(
            data=data,
            families=families,
            groups=groups,
            sections=sections,
            data_dir=data_dir,
            hw_summary=model.hw_summary,
            run_dates=model.run_dates,
            describe_trend=trend.describe,
            severity=executive.SEVERITY,
            verdict_colours=verdictcolours.css_variables(),
            stream_short=headline.SHORT,
            headlines=', '.join(CATALOG.headlines()),
            # The summary line's order, then what only the report shows.
            states=(*view.SUMMARY_ORDER, model.MISSING),
        )


def write(data, output):
    """Write the report to *output* and its CSVs beside it; return the paths.

    All or nothing: every file is written to a temporary name first and only
    renamed into place once all of them are complete, so a full disk (or any
    other write error) leaves no partial report and no half-written CSV, only
    one line naming the file and the reason.
    """
    output = os.path.abspath(output)
    folder = os.path.dirname(output)
    stem = os.path.splitext(os.path.basename(output))[0]
    data_dir_name = f'{stem}-data'
    data_dir = os.path.join(folder, data_dir_name)
    sections, plots = plotlib.make_all(data)
    html = render(data, sections, data_dir_name)
    files = [(os.path.join(data_dir, plot.csv_name), plot.csv_text) for plot in plots]
    files.append((os.path.join(data_dir, 'summary.csv'), summary_csv(data)))
    files.append((os.path.join(data_dir, 'executive.csv'), executive_csv(data)))
    files.append((output, html))
    made_dir = not os.path.isdir(data_dir)
    staged = []
    try:
        _create(data_dir)
        for path, text in files:
            staged.append((_stage(path, text), path))
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            _remove(tmp)
        if made_dir:
            _remove(data_dir, os.rmdir)
        raise
    return output, data_dir, plots, [path for path, _ in files[:-1]]


def _create(directory):
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as err:
        raise ClusterbenchError(f'{directory}: cannot create: {_reason(err)}') from None


def _stage(path, text):
    """*text* in a temporary file beside *path*; return its name."""
    try:
        fd, tmp = tempfile.mkstemp(
            dir=os.path.dirname(path), prefix='.tmp-', suffix='.part'
        )
    except OSError as err:
        raise ClusterbenchError(f'{path}: cannot write: {_reason(err)}') from None
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except OSError as err:
        _remove(tmp)
        raise ClusterbenchError(f'{path}: cannot write: {_reason(err)}') from None
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _reason(err):
    # ENOSPC's text is "No space left on device"; say it the same way always.
    return err.strerror.lower() if err.strerror else str(err)


def _remove(path, remove=os.unlink):
    try:
        remove(path)
    except OSError:
        pass

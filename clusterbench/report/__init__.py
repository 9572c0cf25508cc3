"""``clusterbench report``: stored runs -> one self-contained HTML report.

    clusterbench report REPORT... [--history QUERY] [-o results/report.html]

Takes ReFrame JSON reports (or session directories of ``results/``) and/or
sessions of ReFrame's results database, and writes one HTML file with every
plot embedded, plus the data of every plot as CSV in ``<name>-data/`` beside
it. See :mod:`clusterbench.report.assemble` for what is computed; its
options are :mod:`clusterbench.cli.report`'s.
"""

import sys
import time

from clusterbench.core.errors import ClusterbenchError
from clusterbench.references import directory as refdir
from clusterbench.references import lookup as reflookup

DEFAULT_OUTPUT = 'results/report.html'


def run(args, out=sys.stdout):
    """Build and write the report for parsed *args*; return the exit code."""
    from clusterbench.report import assemble, render

    if not args.reports and not args.history:
        raise ClusterbenchError('nothing to report: give REPORT files or --history')
    start = time.perf_counter()
    runs = assemble.load_reports(args.reports)
    if args.history:
        runs += assemble.load_history(args.history, args.config)
    references = refdir.chosen(getattr(args, 'references', None))
    for one in runs if references else ():
        reflookup.rejudge(one.data, references)
    data = assemble.assemble(
        runs,
        title=args.title,
        references=refdir.resolve(getattr(args, 'references', None)),
        baseline=getattr(args, 'baseline', None),
    )
    html, data_dir, plots, _ = render.write(data, args.output)
    elapsed = time.perf_counter() - start
    refdir.announce(references or refdir.RECORDED, out)
    print(
        f'wrote {html} ({len(data.configs)} configuration(s), '
        f'{len(data.benchmarks)} figure(s), {len(plots)} plot(s)) and the '
        f'CSVs in {data_dir}/ in {elapsed:.1f} s',
        file=out,
    )
    return 0

"""`clusterbench report`: one self-contained HTML report from run reports
and/or the results database (the work is clusterbench.report's)."""

from clusterbench import report


def add_parser(sub):
    rpt = sub.add_parser(
        'report',
        help='write one self-contained HTML report (plots embedded, the CSV of '
        'every plot beside it) from run reports and/or the results database',
    )
    report.add_arguments(rpt)
    rpt.set_defaults(func=report.run)

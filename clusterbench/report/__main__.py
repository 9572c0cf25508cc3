"""``python -m clusterbench.report``: the same as ``clusterbench report``."""

import sys

from clusterbench.cli import report

sys.exit(report.main())

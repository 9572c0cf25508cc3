"""``python -m clusterbench.report``: the same as ``clusterbench report``."""

import sys

from clusterbench.report import main

sys.exit(main())

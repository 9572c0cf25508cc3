"""``python -m clusterbench.acceptance``: the same as ``clusterbench acceptance``."""

import sys

from clusterbench.cli import acceptance

sys.exit(acceptance.main())

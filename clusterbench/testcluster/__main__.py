"""``python -m clusterbench.testcluster``: the same as ``clusterbench testcluster``."""

import sys

from clusterbench.cli import testcluster

sys.exit(testcluster.main())

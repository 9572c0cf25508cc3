"""``python -m clusterbench.cli``: the ``clusterbench`` command."""

import sys

from clusterbench.cli import main

sys.exit(main())

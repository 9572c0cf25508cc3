"""Which reference directory a command reads: one rule for every command.

``--references DIR`` wins, then ``RFM_REFERENCE_PREFIX`` (the variable with
which ReFrame itself is pointed at a reference directory), then the project's
``reference_data/``. Every command says which directory it read: a header line
of text output, on stderr beside CSV or JSON (which stay clean on stdout).
"""

import os
import sys

DEFAULT = 'reference_data'
ENV = 'RFM_REFERENCE_PREFIX'


def resolve(option=None):
    return option or os.environ.get(ENV) or DEFAULT


def announce(directory, out=None):
    print(f'references: {directory}', file=out or sys.stdout, flush=True)

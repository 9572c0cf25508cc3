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


#: What `compare` and `report` say when no directory is chosen: they judge
#: as ReFrame did, against the references it recorded in each report.
RECORDED = 'as recorded in the report by ReFrame'


def resolve(option=None):
    return option or os.environ.get(ENV) or DEFAULT


def chosen(option=None):
    """The directory to re-judge stored reports against, or None: the
    references ReFrame recorded in them (it judged against the directory of
    its own RFM_REFERENCE_PREFIX, else reference_data/)."""
    return option or os.environ.get(ENV) or None


def announce(directory, out=None):
    print(f'references: {directory}', file=out or sys.stdout, flush=True)

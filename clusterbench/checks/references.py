"""External references (ReFrame 4.10 ``$ref``) kept in the project's reference_data/."""

import os

import reframe as rfm
import reframe.core.runtime as rt
from reframe.core.builtins import run_after, variable

# reframe_checks/ and reference_data/ are siblings in a clusterbench tree.
_PROJECT_REFERENCES = os.path.join('..', 'reference_data')


class ExternalReferences(rfm.RegressionTestPlugin):
    """Read this test's references from a YAML file, never inline.

    The file is looked up in ``RFM_REFERENCE_PREFIX`` when that is set (a site
    keeping its references elsewhere), otherwise in ``reference_data/`` beside
    the directory of the concrete check.
    """

    #: The YAML file, relative to the reference directory.
    reference_file = variable(str)

    @run_after('init')
    def _use_external_references(self):
        prefix = rt.runtime().get_option('general/0/reference_prefix')
        if prefix:
            path = self.reference_file
        else:
            prefix = self.prefix
            path = os.path.join(_PROJECT_REFERENCES, self.reference_file)
        # ReFrame drops a test whose reference file is missing; a missing file
        # must instead show as "no reference" on every figure.
        if os.path.isfile(os.path.join(prefix, path)):
            self.reference = {'$ref': path}

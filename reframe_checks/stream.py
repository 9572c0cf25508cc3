"""STREAM built from its release in each environment (Spack with -S build_mode=spack).

Not generated, with one line saying why, when the release cannot be had
(see clusterbench/checks/stream.py).
"""

import reframe as rfm

from clusterbench.checks.stream import StreamBase


@rfm.simple_test
class StreamCheck(StreamBase):
    tags = {'spack', 'stream', 'memory'}
    maintainers = ['clusterbench']

"""STREAM built by Spack from each partition's environment (-S build_mode=spack)."""

import reframe as rfm

from clusterbench.checks.stream import StreamBase


@rfm.simple_test
class StreamCheck(StreamBase):
    tags = {'spack', 'stream', 'memory'}
    maintainers = ['clusterbench']

"""The machine a benchmark runs on, read on the node itself: hardware and
software facts and the identity of a node (hwinfo and its parts), the
run conditions taken around every job (conditions) with the host probe
beside them (hostprobe), energy readings
(energy), the declared link peaks (linkpeak) and the last-level cache size
(lastlevelcache). Nothing here knows ReFrame, references or verdicts.

Imports: core
"""

"""The machine a benchmark runs on, read on the node itself: hardware and
software facts and the identity of a node (hwinfo and its parts), energy
readings (energy), the declared link peaks (linkpeak), the theoretical peak of a core
and a node and the microarchitecture of a CPU kind (peak), the last-level cache size
(lastlevelcache), and OpenBLAS's kernel choice against the CPU
(blascore). Nothing here knows ReFrame, references or verdicts.
"""

"""clusterbench: reproducible HPC application benchmarks on top of ReFrame."""

__version__ = '0.1.0'

"""Deciding verdicts: the vocabulary of figures (unit, better higher or
lower), the statistics (median, MAD, tolerance band, confidence intervals),
the verdict of each figure against its reference or baseline and how the
table of verdicts is shown (view), change points over time (trend), the
one rule for DISTURBED samples (disturbed), and
what a run session is asked for (selection).
"""

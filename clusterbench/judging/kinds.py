"""The kinds of verdict (:class:`Kind`) and what each does to the exit code:
the one closed set that tables, colours, JUnit and exit codes read. The
judging itself is :mod:`clusterbench.judging.verdict`'s, which names these
too."""

import enum


class Kind(enum.StrEnum):
    """What a verdict says, and so what it does to the exit code.

    A StrEnum whose value is the word the tables print (lowercase: pass, or
    nothing to judge; uppercase: a finding). Decisions (exit codes, --strict,
    JUnit failures, colours) read the kind, never the text. Words merged on
    purpose, because to a user they meant the same:

    - WORSE (a figure of merit that is not a speed beyond its band on the bad
      side) is FLAGGED, as is a figure with no better direction beyond its
      band and a node or link that acceptance condemns: "outside what is
      accepted, and not a speed" -- the unit column says which figure. SLOWER
      stays for speeds, the word a user looks for;
    - the report's ``missing`` (not run on this configuration) and
      acceptance's ``MISSING`` (an expected node without a result) are one
      ``missing``: no result at all, nothing judged.
    """

    PASS = 'pass'
    #: Beyond tolerance in the bad direction, for a speed (a rate or a time).
    SLOWER = 'SLOWER'
    #: Beyond tolerance on the bad side for any other figure (an efficiency,
    #: energy; either side for one with no better direction); for acceptance
    #: a node or link outside its peers or its specification. Fails the run.
    FLAGGED = 'FLAGGED'
    #: Beyond tolerance in the good direction: the reference is likely stale.
    #: Reported, but fails only a --strict run.
    FASTER = 'FASTER'
    #: Worse than its reference by at least the detection threshold, yet not
    #: flagged: inside a band wider than that threshold on its bad side (or
    #: beyond it, but not significantly). The band cannot tell such a change
    #: from this machine's noise; the verdict says so instead of ``pass``.
    #: Fails only a --strict run. Plain ReFrame passes these figures.
    INCONCLUSIVE = 'INCONCLUSIVE'
    NO_REFERENCE = 'no reference'
    #: Measured while the run's conditions broke the partition's thresholds
    #: (the detail names the measurements): shown, not judged. Fails only a
    #: --strict run.
    DISTURBED = 'DISTURBED'
    #: The test failed (the row's phase says where, the detail why).
    FAILED = 'FAILED'
    SKIPPED = 'skipped'
    #: No result at all (a configuration that did not run the benchmark, a
    #: node without a battery result).
    MISSING = 'missing'
    #: ``clusterbench ab``: B/A's interval contains 1 (the detail says the
    #: smallest change the run could have resolved).
    UNRESOLVED = 'no difference resolved'
    #: ``clusterbench ab``: no block measured both A and B.
    NOT_PAIRED = 'not paired'
    #: ``clusterbench ab``: B resolved worse than A in a figure of merit that
    #: is no speed (an efficiency). Against a band (run, compare) the same
    #: figure is FLAGGED; an A/B table keeps FLAGGED for a figure with no
    #: better direction, whose change is neither better nor worse (docs/ab.md).
    AB_WORSE = 'WORSE'

    @property
    def fails_run(self):
        """A regression or a failure: fails every run (exit 1)."""
        return self in REGRESSIONS

    @property
    def fails_strict(self):
        """Fails only a --strict run (exit 3)."""
        return self in STRICT_ONLY


PASS = Kind.PASS
SLOWER = Kind.SLOWER
FLAGGED = Kind.FLAGGED
#: Merged into FLAGGED (see Kind); the name stays for callers.
WORSE = Kind.FLAGGED
FASTER = Kind.FASTER
FASTER_HINT = 'reference stale?'
INCONCLUSIVE = Kind.INCONCLUSIVE
NO_REFERENCE = Kind.NO_REFERENCE
DISTURBED = Kind.DISTURBED
FAILED = Kind.FAILED
SKIPPED = Kind.SKIPPED
MISSING = Kind.MISSING
#: The smallest change that must never pass silently (the same number as
#: ``references check --max-tolerance``).
DETECTION_THRESHOLD = 0.10

#: Exit codes of compare, replay and run.
EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_STRICT = 3

#: Verdicts that fail every run, and those that fail only a --strict one.
REGRESSIONS = frozenset((SLOWER, FLAGGED, FAILED, Kind.AB_WORSE))
STRICT_ONLY = frozenset((NO_REFERENCE, FASTER, DISTURBED, INCONCLUSIVE))

"""The colour of each verdict, keyed by its kind: the one table that the
badges of the page (their CSS class and its colour), the bars, dots and
trend points read. A verdict kind the table does not hold is drawn as
missing."""

from clusterbench.judging.kinds import Kind

#: kind -> (the badge's CSS class, its colour). SLOWER and FLAGGED share one:
#: both are outside what is accepted.
COLOURS = {
    Kind.PASS: ('pass', '#2e7d32'),
    Kind.SLOWER: ('flagged', '#c62828'),
    Kind.FLAGGED: ('flagged', '#c62828'),
    Kind.FASTER: ('faster', '#1565c0'),
    Kind.INCONCLUSIVE: ('inconclusive', '#f9a825'),
    Kind.NO_REFERENCE: ('noref', '#546e7a'),
    Kind.DISTURBED: ('disturbed', '#ef6c00'),
    Kind.FAILED: ('failed', '#b71c1c'),
    Kind.MISSING: ('missing', '#9e9e9e'),
}
MISSING = COLOURS[Kind.MISSING]


def _style(state):
    try:
        return COLOURS.get(Kind(state), MISSING)
    except ValueError:
        return MISSING


def colour(state):
    """The colour of a verdict kind (a Kind, or the word a report holds)."""
    return _style(state)[1]


def css_class(state):
    """The CSS class of a verdict's badge."""
    return _style(state)[0]


def css_variables():
    """``--pass: #2e7d32; ...``: each badge class's colour, for the page's
    style sheet."""
    seen = dict(COLOURS.values())
    return ' '.join(f'--{name}: {value};' for name, value in seen.items())

"""The sessions of a row (or of the whole report) in words that read one
way: how many there are, and of them how many were DISTURBED and left out.

A session is DISTURBED and left out when every test of it that measured was
DISTURBED; one with some DISTURBED tests and others undisturbed is counted
apart (its DISTURBED tests are left out, the others are judged).
"""

from clusterbench.judging import verdict

DISTURBED = verdict.DISTURBED


def said(healthy, disturbed):
    """'3 sessions, none DISTURBED', '6 sessions, all 6 DISTURBED and left
    out', '6 sessions: 4 undisturbed, 2 DISTURBED and left out' of the
    session ids *healthy* (with an undisturbed test that measured) and
    *disturbed* (with a DISTURBED test)."""
    healthy, disturbed = set(healthy), set(disturbed)
    total = len(healthy | disturbed)
    counts = (
        (len(healthy - disturbed), 'undisturbed'),
        (len(healthy & disturbed), f'with {DISTURBED} tests left out'),
        (len(disturbed - healthy), f'{DISTURBED} and left out'),
    )
    parts = [(n, words) for n, words in counts if n]
    head = f'{total} session' + 's' * (total != 1)
    if not disturbed:
        return f'{head}, none {DISTURBED}' if total else 'no session'
    if len(parts) == 1:
        words = parts[0][1]
        return f'{head}, {words}' if total == 1 else f'{head}, all {total} {words}'
    return f'{head}: ' + ', '.join(f'{n} {words}' for n, words in parts)

"""Control characters in text from outside (a report's test names, a YAML
key, a path) written as their escape, ``\\x1b``, wherever such text is shown:
on a terminal, ``ESC[8m`` would hide what follows and ``\\r`` overwrite it;
in XML, they make a file no parser reads. The name stays recognisable.
"""

import re

#: What a terminal acts on rather than shows: C0 and C1 control characters
#: (tab and newline too: a cell or a line must stay one), DEL, the bidi
#: overrides and isolates that reorder what follows, and lone surrogates.
_TERMINAL = re.compile(r'[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]')
#: What XML 1.0 cannot hold, escaped or not: the control characters but tab,
#: newline and CR, surrogates (ElementTree writes them raw, and then no parser
#: reads the file).
_NOT_XML = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')


def _escape(match):
    return match.group().encode('unicode_escape').decode()


def escaped(text):
    """*text* for a terminal: every control character as its escape."""
    return _TERMINAL.sub(_escape, text)


def escaped_lines(text):
    """*text* of several lines for a terminal: each line :func:`escaped`."""
    return '\n'.join(escaped(line) for line in text.split('\n'))


def xml_text(text):
    """*text* for XML 1.0: what it cannot hold as its escape."""
    return _NOT_XML.sub(_escape, text)

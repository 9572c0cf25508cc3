"""The one reader of the YAML files of a reference directory: its reference
files and their provenance.

YAML lets a file say things that a reference file must never mean:

- an anchor and its aliases repeat a node; nested, 859 bytes of them make a
  billion strings (the "billion laughs"), and every walk of the tree hangs;
- a key given twice is silently the last one (a reference edited in one place
  is read from another);
- an empty file (most likely a truncated write) reads as "no references".

This reader refuses each with one line naming the file and line. It composes
from libyaml's events where they exist (fast enough for provenance files of
half a megabyte) with PyYAML's own composer, so that every node is refused
before anything walks it.
"""

import re

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from clusterbench.core.errors import ClusterbenchError

try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML without libyaml
    CParser = None


_MERGE = 'tag:yaml.org,2002:merge'
_SURROGATE = re.compile(r'[\ud800-\udfff]')


class ReferenceFileError(ClusterbenchError):
    """A reference file that ReFrame would misread or reject."""


class _Refusing(Composer, SafeConstructor, Resolver):
    """A safe loader's composer that refuses anchors, aliases, merge keys and
    duplicate keys; its parser is the subclass's (its methods come first)."""

    def __init__(self, name):
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.file_name = name

    def _refuse(self, mark, problem):
        raise ReferenceFileError(f'{self.file_name}:{mark.line + 1}: {problem}')

    def compose_node(self, parent, index):
        event = self.peek_event()
        # An alias always follows its anchor: refusing anchors refuses both,
        # before any node is repeated.
        if getattr(event, 'anchor', None) is not None:
            sign = '*' if isinstance(event, yaml.AliasEvent) else '&'
            what = 'alias' if sign == '*' else 'anchor'
            self._refuse(
                event.start_mark,
                f'YAML {what} {sign}{event.anchor}: not allowed in a reference file',
            )
        return super().compose_node(parent, index)

    def compose_scalar_node(self, anchor):
        node = super().compose_scalar_node(anchor)
        found = _SURROGATE.search(node.value)
        if found:
            # "\\ud800" escapes one; no output (UTF-8, HTML, CSV) can encode it.
            self._refuse(
                node.start_mark, f'not valid text (a lone surrogate {found.group()!a})'
            )
        return node

    def compose_mapping_node(self, anchor):
        node = super().compose_mapping_node(anchor)
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                self._refuse(
                    key_node.start_mark,
                    'YAML merge key <<: not allowed in a reference file',
                )
            if not isinstance(key_node, yaml.ScalarNode):
                continue  # not a name: the validator says so
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                self._refuse(
                    key_node.start_mark,
                    f'duplicate key {key!r} (also on line {seen[key]})',
                )
            seen[key] = line
        return node


class _PyLoader(_Refusing, Reader, Scanner, Parser):
    def __init__(self, text, name):
        Reader.__init__(self, text)
        Scanner.__init__(self)
        Parser.__init__(self)
        _Refusing.__init__(self, name)


if CParser is not None:

    class _CLoader(_Refusing, CParser):
        def __init__(self, text, name):
            CParser.__init__(self, text)
            _Refusing.__init__(self, name)

else:
    _CLoader = _PyLoader


def _syntax_error(name, err):
    line = err.problem_mark.line + 1 if err.problem_mark else 0
    problem = err.problem
    if err.context_mark and err.context_mark.line + 1 != line:
        # An unclosed bracket is noticed lines later: name where it opened.
        problem = f'{err.context}: {problem} (line {line})'
        line = err.context_mark.line + 1
    problem = ' '.join(str(problem).split())
    return ReferenceFileError(f'{name}:{line}: YAML error: {problem}')


def _other_error(name, text, err):
    """One line of a YAML error without a mark (PyYAML's spans lines)."""
    if isinstance(err, yaml.reader.ReaderError):
        line = text.count('\n', 0, err.position) + 1 if isinstance(text, str) else 0
        char = err.character
        char = chr(char) if isinstance(char, int) else char
        return ReferenceFileError(
            f'{name}:{line}: YAML error: unacceptable character {char!a}: {err.reason}'
        )
    return ReferenceFileError(f'{name}: YAML error: {" ".join(str(err).split())}')


def _undecodable_line(path):
    with open(path, 'rb') as f:
        data = f.read()
    try:
        data.decode('utf-8')
    except UnicodeDecodeError as err:
        return data.count(b'\n', 0, err.start) + 1
    return 0


def _parsed(loader, construct):
    try:
        node = loader.get_single_node()
        if node is None or not construct:
            return node
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _read(text, name, construct):
    try:
        return _read_either(text, name, construct)
    except RecursionError:
        # The composer recurses once per level of nesting.
        raise ReferenceFileError(f'{name}: YAML error: nested too deeply') from None


def _read_either(text, name, construct):
    try:
        return _parsed(_CLoader(text, name), construct)
    except yaml.MarkedYAMLError:
        pass
    except yaml.YAMLError as err:
        raise _other_error(name, text, err) from None
    # PyYAML's own parser says what is wrong in its words, the ones every
    # message of clusterbench has used (libyaml's differ): read it again.
    try:
        return _parsed(_PyLoader(text, name), construct)
    except yaml.MarkedYAMLError as err:
        raise _syntax_error(name, err) from None
    except yaml.YAMLError as err:
        raise _other_error(name, text, err) from None


def _from_file(path, construct):
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError as err:
        raise ReferenceFileError(f'{path}: cannot read: {err.strerror}') from None
    except UnicodeDecodeError:
        raise ReferenceFileError(
            f'{path}:{_undecodable_line(path)}: not UTF-8 text'
        ) from None
    return _read(text, path, construct)


def compose(path):
    """The node tree of the reference file *path* (its lines are in the
    nodes' marks): a one-line :class:`ReferenceFileError` for a file that
    cannot be read, is not YAML, holds what this module refuses, or is empty."""
    root = _from_file(path, construct=False)
    if root is None:
        raise ReferenceFileError(f'{path}: empty reference file')
    return root


def load(path):
    """The contents of the reference file *path*, as :func:`compose` refuses."""
    data = _from_file(path, construct=True)
    if data is None:
        raise ReferenceFileError(f'{path}: empty reference file')
    return data


def load_any(path):
    """The contents of a YAML file of a reference directory (a provenance
    file): None when it is empty; refused as :func:`compose` refuses."""
    return _from_file(path, construct=True)


def parse(data, name):
    """The contents of *data* (text or bytes of a YAML document, *name* in
    messages), as :func:`compose` refuses; None when it is empty."""
    return _read(data, name, construct=True)

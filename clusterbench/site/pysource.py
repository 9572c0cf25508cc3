"""Python source of a generated site configuration: values as code, with
the facts ``site init`` could not read written as ``# TODO`` comments."""

import textwrap

from clusterbench.site.sitefacts import Todo


class Code(str):
    """Python source written as is into the generated file."""


class Note:
    """A value of a dict written after a comment that says why."""

    def __init__(self, comment, value):
        self.comment = comment
        self.value = value


def render(value, indent=0):
    """*value* as Python source; a Todo inside a dict or list is a comment."""
    pad = ' ' * (indent + 4)
    if isinstance(value, Code):
        return str(value).replace('\n', '\n' + ' ' * indent)
    if isinstance(value, dict):
        lines = ['{']
        for key, item in value.items():
            if isinstance(item, Todo):
                lines += todo_lines(f'{key}: {item.reason}', pad)
            elif isinstance(item, Note):
                lines += comment_lines(item.comment, pad)
                lines.append(f'{pad}{key!r}: {render(item.value, indent + 4)},')
            else:
                lines.append(f'{pad}{key!r}: {render(item, indent + 4)},')
        return '\n'.join([*lines, ' ' * indent + '}'])
    if isinstance(value, list):
        if all(type(v) in (str, int, float) for v in value) and len(repr(value)) < 60:
            return repr(value)
        lines = ['[']
        for item in value:
            if isinstance(item, Todo):
                lines += todo_lines(item.reason, pad)
            else:
                lines.append(f'{pad}{render(item, indent + 4)},')
        return '\n'.join([*lines, ' ' * indent + ']'])
    return repr(value)


def todo_lines(text, pad):
    return textwrap.wrap(
        f'TODO: {text}',
        width=88,
        initial_indent=f'{pad}# ',
        subsequent_indent=f'{pad}#   ',
    )


def comment_lines(text, pad):
    return textwrap.wrap(
        text, width=88, initial_indent=f'{pad}# ', subsequent_indent=f'{pad}# '
    )

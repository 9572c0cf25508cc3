"""One naming of options across the `clusterbench` subcommands: a reference
directory is `--references DIR` everywhere, the INCONCLUSIVE threshold is
`--detection-threshold`, and every command that judges has `--format`; the old
spellings still parse to the same thing, unlisted in the help."""

import pytest

from clusterbench.cli import parser
from clusterbench.judging import verdict

JUDGES = (['run'], ['compare', 'r.json'], ['replay', 'r.json'])
WITH_REFERENCES = (
    *JUDGES,
    ['references', 'check'],
    ['references', 'repair'],
    ['references', 'update', '--from', 'r.json'],
    ['references', 'show'],
)


def parse(*argv):
    return parser().parse_args(list(argv))


@pytest.mark.parametrize('command', WITH_REFERENCES, ids=' '.join)
def test_every_reference_directory_is_references_and_directory_still_works(
    command,
):
    assert parse(*command, '--references', 'D').references == 'D'
    assert parse(*command, '--directory', 'D').references == 'D'
    assert parse(*command).references is None


def test_references_check_still_takes_its_directory_as_an_argument():
    args = parse('references', 'check', 'D')
    assert (args.references, args.old_directory) == (None, 'D')


@pytest.mark.parametrize('command', JUDGES, ids=' '.join)
def test_the_detection_threshold_has_its_name_and_its_old_one(command):
    assert parse(*command).threshold == verdict.DETECTION_THRESHOLD
    assert parse(*command, '--detection-threshold', '0.2').threshold == 0.2
    assert parse(*command, '--max-tolerance', '0.3').threshold == 0.3
    assert parse(*command, '--format', 'junit').format == 'junit'


def test_the_help_lists_only_the_new_names(capsys):
    for command in ('run', 'compare'):
        with pytest.raises(SystemExit):
            parse(command, '-h')
        text = capsys.readouterr().out
        listed = [line.split()[0] for line in text.splitlines() if line[:3] == '  -']
        assert '--detection-threshold' in listed and '--references' in listed
        assert '--max-tolerance' not in listed and '--directory' not in text
    with pytest.raises(SystemExit):
        parse('references', 'check', '-h')
    # There it is the tolerance check's own option.
    assert '  --max-tolerance FRACTION' in capsys.readouterr().out


def test_ab_names_the_change_to_resolve_as_the_judges_do(capsys):
    assert parse('ab', '--detection-threshold', '0.05').threshold == 0.05
    assert parse('ab', '--max-change', '0.07').threshold == 0.07
    with pytest.raises(SystemExit):
        parse('ab', '-h')
    text = capsys.readouterr().out
    assert '--detection-threshold' in text and '--max-change' not in text


def test_ab_judges_at_99_percent_unless_told_95(capsys):
    assert parse('ab').confidence == 99 and parse('ab').repeats == 8
    assert parse('ab', '--confidence', '95').confidence == 95
    with pytest.raises(SystemExit):
        parse('ab', '--confidence', '90')
    assert 'invalid choice: 90 (choose from 95, 99)' in capsys.readouterr().err


#: The options naming a file or directory a command reads (or writes) by default.
PATH_OPTIONS = ('--config', '--checks', '--references', '--site-configs')


def _subparsers(top, prefix=()):
    """(command words, parser) of every subcommand, nested ones too."""
    import argparse

    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _subparsers(sub, (*prefix, name))


def test_every_path_option_says_its_default():
    from clusterbench.cli import acceptance

    found = list(_subparsers(parser()))
    found += [(('acceptance', *w), p) for w, p in _subparsers(acceptance.parser())]
    said = []
    for words, sub in found:
        for action in sub._actions:
            named = set(action.option_strings) & set(PATH_OPTIONS)
            if named and action.help:
                said.append(' '.join(words))
                # Where a default comes from is core.paths': say so.
                assert 'default: ' in action.help, (words, action.help)
                assert action.default is None, (words, action.option_strings)
                if '--references' not in named:
                    assert 'here, else' in action.help, (words, action.help)
    for command in ('run', 'ab', 'baseline', 'compare', 'trend', 'report'):
        assert command in said
    assert 'acceptance battery' in said and 'references update' in said

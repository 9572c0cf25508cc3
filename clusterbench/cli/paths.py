"""`clusterbench paths`: where the checks, site configs and references in use
are (the work is clusterbench.core.paths')."""

from clusterbench.core import paths


def add_parser(sub):
    paths.add_arguments(
        sub.add_parser(
            'paths', help='where the checks, site configs and references in use are'
        )
    )

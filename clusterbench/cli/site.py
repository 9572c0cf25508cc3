"""`clusterbench site`: generate a site configuration from the cluster (the
work is clusterbench.site.siteinit's)."""

from clusterbench.site import siteinit


def add_parser(sub):
    siteinit.add_arguments(
        sub.add_parser('site', help='generate a site configuration from the cluster')
    )

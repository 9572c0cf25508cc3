"""The environment of a ReFrame that clusterbench starts.

A site config outside a checkout keeps ReFrame's history in ``results/`` of
the directory the command was started in, which it reads from ``PWD`` (ReFrame
imports a config from inside the config's own directory, so its working
directory does not say). A shell sets ``PWD`` for the programs it starts;
clusterbench does the same for the ReFrame it starts, so that an inherited,
stale ``PWD`` never moves the history.
"""

import os


def environment(env=None):
    """*env* (default: this process's environment) with ``PWD`` the
    directory clusterbench runs in."""
    found = dict(os.environ if env is None else env)
    found['PWD'] = os.getcwd()
    return found

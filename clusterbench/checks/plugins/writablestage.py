"""A build's sources staged writable, wherever they come from.

ReFrame copies ``sourcesdir`` into the stage keeping every mode. Sources
that are read-only where they are (a shared install: EasyBuild's read-only
install directories, Nix, CVMFS, ``chmod -R a-w``; a site's NPB tree; a
read-only mirror) made the stage directory itself read-only, and the build
failed at its first file (``FAILED (compile)``: ``.rfm_mark``: permission
denied). The sources are copied here instead, keeping the modes but with
the user's write permission added, and ReFrame is left nothing to copy.
"""

import os
import shutil
import stat

from reframe.utility import osext


def copy_writable(src, dst):
    """Copy the tree *src* into *dst* (made if needed), every directory and
    file of the copy writable by its owner."""
    shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
    for root, dirs, files in os.walk(dst):
        for path in [root, *(os.path.join(root, name) for name in dirs + files)]:
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and not mode & stat.S_IWUSR:
                os.chmod(path, stat.S_IMODE(mode) | stat.S_IWUSR)


def stage_sources_writable(test):
    """Stage *test*'s local ``sourcesdir`` writable (a URL or a Git
    repository, or a test with ``readonly_files``, is left to ReFrame).

    A function, not a mixin: every build class calls it from its own
    ``run_before('compile')`` hook, which keeps the checks' class count
    (tests/architecture/test_check_depth.py) where it was.
    """
    sources = test.sourcesdir
    if not isinstance(sources, str) or not sources or test.readonly_files:
        return
    if osext.is_url(sources):
        return
    path = os.path.join(test.prefix, sources)
    if not os.path.isdir(path):
        return  # ReFrame says what is wrong with it
    copy_writable(path, test.stagedir)
    test.sourcesdir = None

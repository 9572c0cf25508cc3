"""A benchmark's release tarball, fetched and verified once per session.

:class:`SourceRelease` is a ReFrame fixture of scope ``session``: a check
that builds a benchmark from its release declares
``<bench>_release = fixture(<Bench>Release, scope='session')``, so each
tarball is fetched (cache, mirror or URL, see :mod:`clusterbench.bench.sources`),
verified and unpacked once however many tests and environments build from
it. The fixture runs on the ReFrame host (``local``), where the network and
the cache are.

Outcomes:

- fetched and verified: ``available``, with ``tarball`` (the cache's copy),
  ``tree`` (where it is unpacked) and ``origin`` (cache, mirror, download);
  its job prints the file's sha256, which must be the expected one;
- not needed: a provider the site gave explicitly (a source tree, prefix,
  module, or a Spack session) wins, and nothing is fetched;
- cannot be had (offline, no mirror): not ``available``, ``reason`` says why,
  and the checks that need it are skipped with that line;
- a checksum mismatch: the fixture fails with one line naming the URL and
  both hashes, so nothing that depends on it is built.

Each release has two variables, ``<bench>_url`` and ``<bench>_sha256``
(defaults: :data:`clusterbench.bench.sources.DEFAULTS`), set for the session with
``-S`` so that they reach the fixture. A benchmark declares them, and its
``SourceRelease`` subclass, in its own module (``checks/osu.py``).
"""

import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, sanity_function, variable
from reframe.core.exceptions import ReframeError

from clusterbench.bench import sources
from clusterbench.checks.plugins.spack import find_spack


def release_of(test, name):
    """``(url, sha256)`` of release *name* as the variables of *test* set them."""
    return getattr(test, f'{name}_url'), getattr(test, f'{name}_sha256')


def release_problem(test, name):
    """'' if release *name* can be had in *test*'s session, else why not."""
    url, sha256 = release_of(test, name)
    return sources.reachable(url, sha256)


def mirror_hint(test, name):
    """How release *name* of *test* could be had offline: a mirror."""
    return sources.mirror_hint(release_of(test, name)[0])


class SourceRelease(rfm.RunOnlyRegressionTest):
    """Fetches, verifies and unpacks one release (a fixture, scope session).

    Subclasses set ``release`` (a key of :data:`sources.DEFAULTS`), add that
    release's variables, and may override :meth:`provided_otherwise`.
    """

    valid_systems = ['*']
    valid_prog_environs = ['*']
    local = True
    executable = 'true'
    time_limit = '10m'
    #: The release's name: npb, stream, hpl, osu, imb.
    release = variable(str)
    #: A Spack session (with spack) builds with Spack, which fetches its own
    #: sources.
    build_mode = variable(str, value='offline')
    url = variable(str, value='')
    sha256 = variable(str, value='')
    available = variable(bool, value=False)
    #: Why the release is not available (or not needed).
    reason = variable(str, value='')
    #: cache, mirror or download.
    origin = variable(str, value='')
    tarball = variable(str, value='')
    tree = variable(str, value='')

    def provided_otherwise(self):
        """Why the release is not needed ('' when it is)."""
        # A Spack session without spack falls back to the release.
        if self.build_mode == 'spack' and find_spack():
            return 'build_mode=spack: Spack fetches its own sources'
        return ''

    @run_after('setup')
    def _fetch(self):
        self.url, self.sha256 = release_of(self, self.release)
        self.descr = f'{self.release} release {self.url}'
        other = self.provided_otherwise()
        if other:
            self.reason = f'not needed: {other}'
            return
        try:
            self.tarball, self.origin = sources.fetch(self.url, self.sha256)
            self.tree = sources.unpacked(self.tarball, self.sha256)
        except sources.Unavailable as err:
            self.reason = str(err)
            return
        except sources.SourceError as err:
            raise ReframeError(str(err)) from None
        self.available = True
        self.sha256 = self.sha256.lower()
        self.executable = 'sha256sum'
        self.executable_opts = [shlex.quote(self.tarball)]

    @sanity_function
    def verified(self):
        if not self.available:
            return sn.assert_true(True)
        return sn.assert_found(
            rf'^{self.sha256}\s',
            self.stdout,
            msg=f'{self.tarball}: sha256 is not {self.sha256}',
        )

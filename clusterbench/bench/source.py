"""Where a benchmark's program comes from: one description per benchmark.

A :class:`Source` is data, read by one plugin
(:mod:`clusterbench.checks.provisioning`), which tries the ways it names in
this order, the first that gives the program winning:

1. an installed prefix (``prefix=True``): ``-S <name>_prefix=DIR`` or
   ``CLUSTERBENCH_<NAME>_PREFIX``;
2. an environment whose features name ``feature`` (a module or a Spack
   view puts the program on its ``PATH``);
3. Spack (``-S build_mode=spack``, with ``spack`` on ``PATH``): the root of
   the partition's environment that builds ``spack`` and runs
   ``executable``;
4. the ``release`` tarball (fetched and verified once per session, see
   :mod:`clusterbench.bench.sources`; ``-S <name>_url``, ``<name>_sha256``),
   built once per environment by the ``build`` commands (``{cc}``,
   ``{cxx}``: the environment's MPI compiler wrappers, quoted).

Where none gives it the test is skipped with one line saying how to.
"""

from dataclasses import dataclass

from clusterbench.bench.sources import Release


@dataclass(frozen=True)
class Source:
    """How one benchmark's program may be provided (see the module)."""

    #: Short name: ``osu`` gives ``-S osu_prefix``, ``osu_url``, ``osu_sha256``,
    #: ``CLUSTERBENCH_OSU_PREFIX`` and the fixtures ``OSURelease``, ``OSUBuild``.
    name: str
    #: What a skip calls it: 'OSU Micro-Benchmarks'.
    title: str
    #: The default release (``None``: not built from a release).
    release: Release | None = None
    #: Whether an installed prefix may provide it.
    prefix: bool = False
    #: Whether an unpacked source tree may (``-S <name>_source=DIR``), built
    #: as the release is.
    tree: bool = False
    #: The environment feature that provides it ('' for none).
    feature: str = ''
    #: The Spack package that builds it ('' for none).
    spack: str = ''
    #: Directories of a prefix the binaries may be in, besides ``.`` and ``bin``.
    subdirs: tuple = ()
    #: Shell commands that build the unpacked release (``{cc}``, ``{cxx}``).
    build: tuple = ()
    #: The fixtures' names: ``OSU`` makes ``OSURelease`` and ``OSUBuild``.
    label: str = ''

    @property
    def prefix_variable(self):
        return f'{self.name}_prefix'

    @property
    def prefix_env(self):
        return f'CLUSTERBENCH_{self.name.upper()}_PREFIX'

    def build_commands(self, cc, cxx):
        """The release's build commands with the environment's wrappers."""
        return [line.format(cc=cc, cxx=cxx) for line in self.build]

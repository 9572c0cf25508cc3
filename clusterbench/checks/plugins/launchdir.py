"""Paths a user gives relative to the directory the command ran in.

``-S npb_prefix=results/npb`` names a directory relative to where the user
ran ``reframe`` or ``clusterbench run``. ReFrame builds and runs each test in
its stage directory, so a relative path that setup found would be looked for
in the stage by the build script: ``FAILED (compile_wait): build job failed
with exit code: 2``, the cause only in rfm_build.err. Each such path is made
absolute while the test is made: ReFrame's working directory is then still
the launch directory (it changes into the stage only around a test's build,
run, sanity and performance steps, and into a check's directory only while
importing its file).
"""

import os

#: The checks' variables that name a directory (or a tree) on this host.
PATH_VARIABLES = (
    'npb_source',
    'npb_prefix',
    'npb_spack_env',
    'hpl_source',
    'osu_prefix',
    'imb_prefix',
)


def from_launch_dir(path):
    """*path* made absolute against the launch directory ('' stays '').

    Call it while the test is made or set up (not inside a stage's step)."""
    return os.path.abspath(path) if path else path


def make_absolute(check):
    """*check*'s path variables (PATH_VARIABLES it has) made absolute.

    Call it from a check's ``run_after('init')`` hook."""
    for name in PATH_VARIABLES:
        value = getattr(check, name, None)
        if isinstance(value, str) and value:
            setattr(check, name, from_launch_dir(value))

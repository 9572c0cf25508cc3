"""Packages the project tree (checks, site configs, references, Spack
environments, our C sources, inputs) into the wheel as ``clusterbench/share/``,
laid out as in the checkout (see clusterbench/core/paths.py). Everything else is in
pyproject.toml.
"""

import os
import runpy
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

# Read from the file: clusterbench itself is not importable while it is built.
DIRECTORIES = runpy.run_path(os.path.join('clusterbench', 'core', 'paths.py'))[
    'DIRECTORIES'
]

#: Never packaged: build outputs and caches of a developer's checkout.
IGNORE = shutil.ignore_patterns('__pycache__', '*.pyc', 'build', '*.o', '.spack-env')


class BuildWithProjectTree(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return  # an editable install reads the checkout itself
        share = os.path.join(self.build_lib, 'clusterbench', 'share')
        for directory in DIRECTORIES.values():
            dest = os.path.join(share, directory)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(directory, dest, ignore=IGNORE)


def _out_of_tree():
    """Build directories outside a checkout the user may not write (``pip
    install /shared/clusterbench`` from a read-only copy): setuptools would
    write build/ and clusterbench.egg-info/ into it."""
    if os.access('.', os.W_OK):
        return {}
    import tempfile

    scratch = tempfile.mkdtemp(prefix='clusterbench-build-')
    return {'build': {'build_base': scratch}, 'egg_info': {'egg_base': scratch}}


setup(cmdclass={'build_py': BuildWithProjectTree}, options=_out_of_tree())

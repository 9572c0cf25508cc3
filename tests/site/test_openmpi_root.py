"""Open MPI's run-as-root variables only where the configuration is loaded by
root (CI, containers, the test systems), never for a site's users (issue 30,
finding 6). The same common.py loaded by root and by an unprivileged user.
"""

import os
import shutil
import subprocess
import sysconfig

import adoption
import pytest
from conftest import PROJECT

ROOT_VARIABLES = {'OMPI_ALLOW_RUN_AS_ROOT', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM'}
#: The variable names of an Open MPI environment of each builder.
SHOW = f"""
import runpy
common = runpy.run_path({os.path.join(PROJECT, 'site_configs', 'common.py')!r})
for environ in (
    common['gnu_openmpi'](),
    common['module_environment']('site-openmpi', 'openmpi', ['openmpi/5.0.8']),
):
    print(' '.join(name for name, _ in environ['env_vars']))
"""


def variables(*prefix):
    proc = subprocess.run(
        [*prefix, adoption.SYSTEM_PYTHON, '-c', SHOW],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            'PATH': adoption.SYSTEM_PATH,
            'PYTHONPATH': f'{PROJECT}:{sysconfig.get_path("purelib")}',
        },
    )
    assert proc.returncode == 0, proc.stderr
    return [set(line.split()) for line in proc.stdout.splitlines()]


@pytest.mark.skipif(
    adoption.unavailable() is not None, reason=adoption.unavailable() or ''
)
def test_only_root_gets_open_mpis_run_as_root_variables():
    debian, site = variables()
    assert ROOT_VARIABLES <= debian and ROOT_VARIABLES <= site
    debian, site = variables(shutil.which('runuser'), '-u', adoption.USER, '--')
    assert not ROOT_VARIABLES & (debian | site)

"""NPB installed by the site, one module per programming environment, and
binaries of another MPI skipped as OSU and IMB are (issue 30, finding 7).

Real ReFrame runs on `local` of the stand-in NPB tree's binaries, built with
Open MPI (tests/checks/test_npb_check.py). Each environment names its module in the
site config (`extras['npb_module']`). This machine has no module system
(ReFrame's `nomod` loads nothing), so the binaries are on the PATH the
test gives ReFrame: what a module would do. The MPICH environment's module
provides Open MPI binaries: skipped with the reason, not a sanity failure.
"""

import os

import pytest
from rfm import TINY_CG  # noqa: F401 (one definition of the tiny runs)
from test_npb_check import (  # noqa: F401 (fixture)
    _closed_port,
    cases,
    fake_binaries,
    figures,
    needs_openmpi,
    skip_lines,
)

from clusterbench.testcluster.testing import run_reframe

pytestmark = pytest.mark.integration

#: local, with each environment's own NPB module.
CONFIG = """
import runpy

from clusterbench.core import paths

site_configuration = runpy.run_path(paths.site_config('local.py'))[
    'site_configuration'
]
for environ in site_configuration['environments']:
    environ['extras']['npb_module'] = f"npb/3.4.3-{environ['extras']['mpi']}"
"""


def npb_run(tmp_path, *args, env=None, config=None):
    prefix = tmp_path / 'rfm'
    refs = tmp_path / 'no-references'
    refs.mkdir(exist_ok=True)
    return run_reframe(
        str(config),
        str(prefix),
        '-S', f'npb_url=http://127.0.0.1:{_closed_port()}/NPB3.4.3.tar.gz',
        '-S', 'npb_class=S', '-n', 'benchmark=cg',
        '-S', 'judge_conditions=false', '-S', 'probe_host=false', *args,
        checks=['reframe_checks/npb.py'],
        env={
            'CLUSTERBENCH_CACHE': str(tmp_path / 'cache'),
            'CLUSTERBENCH_MIRROR': '',
            'RFM_SQLITE_DB_FILE': str(prefix / 'results.db'),
            'CLUSTERBENCH_PERFLOGDIR': str(prefix / 'perflogs'),
            'RFM_REFERENCE_PREFIX': str(refs),
            **(env or {}),
        },
    )  # fmt: skip


@needs_openmpi
def test_one_module_per_environment_and_the_other_mpi_skipped(
    tmp_path,
    fake_binaries,  # noqa: F811
):
    config = tmp_path / 'modules.py'
    config.write_text(CONFIG)
    path = f'{fake_binaries}:{os.environ["PATH"]}'
    rc, out, report = npb_run(tmp_path, env={'PATH': path}, config=config)
    assert report is not None, out
    runs = cases(report)
    ran = runs[('NPBCheck', 'cg', 'gnu-openmpi')]
    assert ran['result'] == 'pass', ran['fail_reason']
    assert figures(ran)['mops_total'] > 0
    skipped = runs[('NPBCheck', 'cg', 'gnu-mpich')]
    assert skipped['result'] == 'skip'
    reason = (
        f'{fake_binaries}/cg.S.x is linked with openmpi, environment gnu-mpich '
        'provides mpich (module npb/3.4.3-mpich)'
    )
    assert any(reason in line for line in skip_lines(out)), out
    assert rc == 0, out


@needs_openmpi
def test_a_prefix_of_the_other_mpi_is_skipped(tmp_path, fake_binaries):  # noqa: F811
    config = tmp_path / 'modules.py'
    config.write_text(CONFIG)
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_prefix={fake_binaries.parent}', '-p', 'gnu-mpich',
        config=config,
    )  # fmt: skip
    assert rc == 0, out
    skipped = cases(report)[('NPBCheck', 'cg', 'gnu-mpich')]
    assert skipped['result'] == 'skip'
    reason = f'{fake_binaries}/cg.S.x is linked with openmpi, environment gnu-mpich'
    assert any(reason in line for line in skip_lines(out)), out

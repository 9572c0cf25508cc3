"""NPB class C figures judged against the references of ``local``.

Stand-in binaries print real NPB 3.4 class C outputs (the shared fixtures),
run through ReFrame with the NPB check of tests/checks/test_npb_check.py, so the
figures ReFrame judges are real ones and the references those retired from
reference_data/.
"""

import os
import shlex

import pytest
import yaml
from conftest import FIXTURES, PROJECT, require_fixtures
from reframe.utility.cpuinfo import cpuinfo
from test_npb_check import cases, needs_openmpi, npb_run

from clusterbench.machine import hwinfo
from clusterbench.references import lookup as reflookup

pytestmark = pytest.mark.integration


CLASS_C_RECORDED = ('cg', 'ep', 'ft', 'is', 'lu', 'mg')


def _retired_npb_references(root):
    """The NPB references of local, retired from reference_data/ (their CPU
    kind was assigned, not measured: see its provenance), as a reference
    root of this test: real figures of class C runs to judge against."""
    with open(
        os.path.join(PROJECT, 'reference_data', 'local', 'provenance', 'npb.yaml')
    ) as f:
        (record,) = yaml.safe_load(f)['$retired']
    (root / 'local').mkdir(parents=True)
    (root / 'local' / 'npb.yaml').write_text(yaml.safe_dump(record['references']))
    return str(root)


def _local_processor_has_npb_references(root):
    """Whether *root* has class C CG for this processor on local."""
    case = {
        'name': 'NPBCheck',
        'reference_file': 'npb.yaml',
        'system': 'local',
        'partition': 'default',
        'environ': 'gnu-openmpi',
        'processor_facts': cpuinfo(),
        'cpu_kind': hwinfo.cpu_kind_of_file(),
        'benchmark': 'cg',
        'npb_class': 'C',
        'num_tasks': 2,
    }
    return bool(reflookup.references_for(case, root))


@pytest.fixture
def recorded_class_c(tmp_path):
    """Stand-ins for class C binaries: rank 0 prints a real NPB 3.4 class C output
    (../shared/fixtures/npb, 2 processes), so ReFrame judges real figures."""
    source = require_fixtures(os.path.join(FIXTURES, 'npb'))
    bindir = tmp_path / 'recorded' / 'bin'
    bindir.mkdir(parents=True)
    for bench in CLASS_C_RECORDED:
        output = os.path.join(source, f'{bench}.C.2.out')
        exe = bindir / f'{bench}.C.x'
        exe.write_text(
            '#!/bin/sh\n'
            '[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ] || exit 0\n'
            f'cat {shlex.quote(output)}\n'
        )
        exe.chmod(0o755)
    return bindir.parent


@needs_openmpi
def test_class_c_figures_are_judged_against_the_local_references(
    tmp_path, recorded_class_c
):
    refs = _retired_npb_references(tmp_path / 'refs')
    if not _local_processor_has_npb_references(refs):
        pytest.skip('the NPB references of local have no class C figures for this CPU')
    rc, out, report = npb_run(
        tmp_path, '-S', f'npb_prefix={recorded_class_c}', '-S', 'npb_class=C',
        '-n', f'benchmark=({"|".join(CLASS_C_RECORDED)})', '-p', 'gnu-openmpi',
        env={'RFM_REFERENCE_PREFIX': refs},
    )  # fmt: skip
    runs = cases(report)
    assert {bench for _, bench, _ in runs} == set(CLASS_C_RECORDED), out
    for case in runs.values():
        # Verified real outputs: a failure can only be a figure off its reference.
        assert case['result'] == 'pass' or case['fail_phase'] == 'performance', case
        for name, (value, ref, lower, upper, *_) in case['perfvalues'].items():
            assert value > 0 and ref > 0, f'{name}: no reference found'
            assert lower is not None and upper is not None, name

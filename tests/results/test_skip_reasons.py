"""A test that did not run for its fixture's sake shows the fixture's reason.

ReFrame's report keeps no skip message, and a test skipped (or not run)
because its fixture skipped or failed has neither a reason nor a phase of its
own. These cases are shaped as ReFrame 4.10 writes them (the end-to-end runs
are in test_npb_check.py); the rows are those of the verdict table and the
HTML report.
"""

from test_report_assemble import build, case

from clusterbench.results import runreport

NOT_PROVIDED = 'NPB not provided: give -S npb_source=<unpacked NPB3.4-MPI tree>'
DEP = ['NPBProvided_105baa0d', 'local:default', 'gnu-openmpi']


def fixture(**how):
    return case(
        name='NPBProvided %benchmark=cg ~local:default+gnu-openmpi',
        display_name='NPBProvided %benchmark=cg ~local:default+gnu-openmpi',
        unique_name=DEP[0],
        fixture=True,
        nodes=[],
        **how,
    )


def dependent(result='skip'):
    return case(
        name='NPBCheck %mpi=openmpi %npb_binaries.benchmark=cg',
        unique_name='NPBCheck_03',
        result=result,
        dependencies_actual=[DEP],
        skip_reason='',
        nodes=[],
    )


def rows(*cases):
    data = {'runs': [{'testcases': list(cases)}]}
    return runreport.extract(data, 'report.json')[1]


def test_a_test_skipped_for_its_fixture_shows_the_fixtures_reason():
    (row,) = rows(fixture(result='skip', skip_reason=NOT_PROVIDED), dependent())
    assert (row.phase, row.reason) == (runreport.SKIPPED, NOT_PROVIDED)


def test_a_test_not_run_because_its_fixture_failed_names_the_failure():
    failed = fixture(
        result='fail',
        fail_phase='setup',
        fail_reason='reframe error: /nonexistent: NPB source tree not found',
    )
    (row,) = rows(failed, dependent('fail_deps'))
    assert row.phase == 'setup'
    assert row.reason == (
        'NPBProvided %benchmark=cg failed: /nonexistent: NPB source tree not found'
    )


def test_without_any_reason_the_row_says_so():
    (row,) = rows(fixture(result='skip', skip_reason=''), dependent())
    assert row.reason == 'no reason given'
    (row,) = rows(dependent('fail_deps'))
    assert (row.phase, row.reason) == ('unknown', 'no reason given')


def test_the_html_report_lists_the_fixtures_reason():
    data = build(fixture(result='skip', skip_reason=NOT_PROVIDED), dependent())
    assert data.skipped == [
        (
            'local',
            'default',
            'gnu-openmpi',
            'NPBCheck %mpi=openmpi %npb_binaries.benchmark=cg',
            NOT_PROVIDED,
        )
    ]

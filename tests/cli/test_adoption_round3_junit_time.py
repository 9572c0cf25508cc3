"""JUnit durations add up to the session (issue 41): a test case's time is
given once, split over the testcases of its figures, and the session's time
outside its test cases (fixtures that fetch and build, ReFrame's own work)
is one testcase of its own. A CI that sums the testcases' times gets the
session's wall time, not 5-6 times it.

A real tiny run (our CG solver, class S, one test case of five figures and
its build fixture) with ``--format junit``, timed from outside.
"""

import json
import time

import junitparser
import pytest
from rfm import CG_CHECKS, TINY_CG, clusterbench


@pytest.fixture(scope='module')
def junit_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('junit-time')
    env = {
        'RFM_SQLITE_DB_FILE': tmp / 'results.db',
        'CLUSTERBENCH_PERFLOGDIR': tmp / 'perflogs',
    }
    started = time.time()
    ran = clusterbench(
        'run', '--results', tmp / 'results', '--format', 'junit', '--confirm', '0',
        '--checks', CG_CHECKS, '--', *TINY_CG,
        '-S', 'judge_conditions=false', '-S', 'probe_host=false',
        env=env,
    )  # fmt: skip
    ended = time.time()
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    (path,) = (tmp / 'results' / 'local').glob('*/report.json')
    report = json.loads(path.read_text())
    # The slack: the command's time that ReFrame's session does not time,
    # measured rather than guessed (about 2 s here, more on a busy machine):
    # Python and ReFrame starting (imports, the site config, loading the check
    # file) before the session's start, and clusterbench judging the report
    # after its end.
    info = report['session_info']
    outside = (info['time_start_unix'] - started) + (ended - info['time_end_unix'])
    xml = junitparser.JUnitXml.fromstring(ran.stdout.encode())
    return xml, report, ended - started, outside


def _cases(xml):
    return [case for suite in xml for case in suite]


@pytest.mark.integration
def test_the_testcase_durations_sum_to_the_session(junit_run):
    xml, report, wall, outside = junit_run
    total = sum(case.time for case in _cases(xml))
    elapsed = report['session_info']['time_elapsed']
    # The session ReFrame timed, within 10 %; and the command's wall time,
    # within 10 % of it plus the slack of its start outside ReFrame's session.
    assert total == pytest.approx(elapsed, rel=0.10), (total, elapsed)
    assert outside >= 0 and total <= wall, (total, wall, outside)
    assert abs(wall - outside - total) <= 0.10 * wall, (total, wall, outside)


@pytest.mark.integration
def test_a_test_case_time_is_given_once_over_its_figures(junit_run):
    xml, report, _, _ = junit_run
    (case,) = [c for c in report['runs'][0]['testcases'] if not c['fixture']]
    suite = next(s for s in xml if s.name == 'CGSolverCheck')
    figures = list(suite)
    assert len(figures) == 5
    assert sum(c.time for c in figures) == pytest.approx(case['time_total'], abs=5e-3)
    assert suite.time == pytest.approx(case['time_total'], abs=1e-3)
    # The rest of the session is said, not hidden: one testcase, passed.
    (rest,) = [s for s in xml if s.name != 'CGSolverCheck']
    (outside,) = list(rest)
    assert outside.is_passed and 'fixtures' in outside.system_out
    assert outside.time == pytest.approx(
        report['session_info']['time_elapsed'] - case['time_total'], abs=5e-3
    )
    assert xml.time == pytest.approx(report['session_info']['time_elapsed'], abs=5e-3)

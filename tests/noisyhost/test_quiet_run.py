"""What holds on a quiet machine: a real benchmark run with no hog beside it
is not DISTURBED, and node acceptance passes the undisturbed test cluster.

Alone (no other test file runs meanwhile): the other workers of `make test`
are load, and on the test cluster, whose nodes are pinned to one core each,
they would make one node slower than its peer.
"""

import pytest
from rfm import only_case, reframe
from test_acceptance_cluster import battery, box, clean, node_table  # noqa: F401
from test_run_conditions import CHECKS, NETPIPE

from clusterbench.acceptance import nodes
from clusterbench.testcluster import testing

pytestmark = pytest.mark.alone


@pytest.mark.integration
def test_the_same_run_without_a_hog_is_not_disturbed(tmp_path):
    busy = []
    for attempt in range(2):
        prefix = tmp_path / str(attempt)
        rc, out, report = reframe(
            prefix, *NETPIPE, '-S', 'wait_quiet=60', checks=CHECKS, conditions=True
        )
        assert report is not None, out
        case = only_case(report)
        cond = case['run_conditions']
        if not case['disturbed']:
            assert rc == 0, out
            assert cond['steal_share'] <= cond['thresholds']['max_steal']
            assert cond['other_cpu_share'] <= cond['thresholds']['max_other_cpu']
            return
        # Disturbed without a hog: only because something else really ran.
        assert cond['other_cpu_share'] > cond['thresholds']['max_other_cpu'] or (
            cond['steal_share'] > cond['thresholds']['max_steal']
        ), cond
        busy.append(
            f'{cond["other_cpu_share"]:.0%} others, {cond["steal_share"]:.0%} steal'
        )
    pytest.skip(f'this machine was busy in each of 2 tries ({"; ".join(busy)})')


@pytest.mark.skipif(
    testing.unavailable() is not None, reason=str(testing.unavailable())
)
def test_the_undisturbed_cluster_passes_with_no_flag(clean, tmp_path):  # noqa: F811
    proc = battery(clean, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '2 node(s): all pass' in proc.stdout
    assert '1 link(s): all pass' in proc.stdout
    assert 'acceptance: PASS' in proc.stdout
    verdicts, table = node_table(tmp_path)
    assert {n: v.verdict for n, v in verdicts.items()} == {
        'n1': nodes.PASS,
        'n2': nodes.PASS,
    }, table
    # Every node has every judged figure.
    for node in verdicts.values():
        assert set(node.figures) == {
            'NodeProbeCheck:stream_triad',
            'NodeProbeCheck:dgemm',
            'NodeCGCheck:gflops',
        }

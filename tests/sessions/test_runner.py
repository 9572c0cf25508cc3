"""`clusterbench run` keeps builds away from benchmarks on a one-node system."""

import os

from conftest import PROJECT

from clusterbench.sessions import runner

LOCAL = os.path.join(PROJECT, 'site_configs', 'local.py')
BOX = os.path.join(PROJECT, 'site_configs', 'box.py')


def test_one_test_at_a_time_where_everything_runs_on_this_host():
    assert runner.policy_options(LOCAL, 'local') == ['--exec-policy=serial']
    assert runner.policy_options(LOCAL, 'local:default') == ['--exec-policy=serial']


def test_batch_partitions_keep_the_concurrent_default():
    assert runner.policy_options(BOX, 'box') == []


def test_an_explicit_policy_wins():
    assert runner.policy_options(LOCAL, 'local', ['--exec-policy=async']) == []


def test_an_unreadable_config_or_unknown_system_adds_nothing(tmp_path):
    broken = tmp_path / 'broken.py'
    broken.write_text('site_configuration = {\n')
    assert runner.policy_options(str(broken), 'local') == []
    assert runner.policy_options(LOCAL, 'nosuchsystem') == []

"""Which nodes srun names as lost in a job's stderr (JobStateCheck)."""

from clusterbench.checks.plugins.jobstate import lost_nodes

# rfm_job.err of a FabricCheck job on the box cluster whose node n2 was
# killed while srun launched the step (CI of 2026-11-24): the job ended
# FAILED, the fabric program with code 13.
LAUNCH_FAILED = """\
srun: error: Unable to get address: Temporary failure in name resolution
srun: error: slurm_receive_msgs: [] failed: Zero Bytes were transmitted or received
srun: error: Task launch for StepId=1.0 failed on node n2: Zero Bytes were \
transmitted or received
srun: error: Application launch failed: Zero Bytes were transmitted or received
srun: error: n1: task 0: Killed
"""


def test_a_failed_task_launch_names_the_node():
    assert lost_nodes(LAUNCH_FAILED) == ['n2']


def test_a_node_failure_during_the_step_names_each_node_once():
    text = 'srun: error: Node failure on n7\nsrun: error: Node failure on n7\n'
    assert lost_nodes(text + 'srun: error: Node failure on n12\n') == ['n7', 'n12']


def test_a_task_that_merely_failed_names_no_node():
    # A program's own failure on a healthy node: srun reports the task only.
    text = 'srun: error: n1: task 0: Exited with exit code 2\n'
    assert lost_nodes(text) == []
    assert lost_nodes('') == []

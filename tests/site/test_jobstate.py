"""Which nodes srun names as lost in a job's stderr (JobStateCheck)."""

from clusterbench.site.scheduler.slurm import lost_nodes

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


# rfm_job.err of the same job with n2 killed while the step ran (CI of
# 2026-11-27): srun lost its connection to the node's slurmstepd and gave up
# before slurmctld marked the node down (the job ended FAILED, fabric with
# code 9). The index is the node's place in the job's node list.
IO_LOST = """\
srun: error: _server_read: fd 15 error reading header: Connection reset by peer
srun: error: step_launch_notify_io_failure: aborting, io error with slurmstepd \
on node 1
slurmstepd-n1: error: *** STEP 1.0 ON n1 CANCELLED AT 2026-11-27T07:47:46 ***
srun: error: n1: task 0: Killed
srun: error: Timed out waiting for job step to complete
"""


def test_a_node_lost_while_the_step_runs_is_named_from_its_index():
    assert lost_nodes(IO_LOST, ['n1', 'n2']) == ['n2']
    # Without the node list: the index, as srun gives it.
    assert lost_nodes(IO_LOST) == ['node 1']


def test_a_task_that_merely_failed_names_no_node():
    # A program's own failure on a healthy node: srun reports the task only.
    text = 'srun: error: n1: task 0: Exited with exit code 2\n'
    assert lost_nodes(text) == []
    assert lost_nodes('') == []

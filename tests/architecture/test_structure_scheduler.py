"""The scheduler seam: what clusterbench knows of a batch scheduler (the
states in which it ends a job, the nodes its launcher says it lost, what
`site init` reads of its partitions) is in clusterbench/site/scheduler/,
with Slurm as its one implementation; nothing else names Slurm's commands
or states."""

import os
import re

import pytest
from conftest import PROJECT
from rfm import clusterbench

from clusterbench.site import scheduler

#: What only a Slurm implementation knows: the commands that read it, the
#: states it ends jobs in, srun's messages of a lost node.
SLURM_WORDS = re.compile(r"\['scontrol'|\['srun', '--mpi|'NODE_FAIL'|srun: error")


def test_slurm_knowledge_is_only_in_the_seam():
    found = []
    top = os.path.join(PROJECT, 'clusterbench')
    for root, _, files in os.walk(top):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, PROJECT)
            if not name.endswith('.py') or rel.startswith(
                'clusterbench/site/scheduler/'
            ):
                continue
            with open(path, encoding='utf-8') as f:
                for n, line in enumerate(f, 1):
                    if SLURM_WORDS.search(line):
                        found.append(f'{rel}:{n}')
    assert not found, found


def test_slurm_is_the_one_implementation():
    slurm = scheduler.named('slurm')
    assert scheduler.named('squeue') is slurm  # ReFrame's other Slurm backend
    assert scheduler.named('pbs') is None and scheduler.named('local') is None
    for part in scheduler.INTERFACE:
        assert callable(getattr(slurm, part)), part


@pytest.mark.parametrize(
    'backend, state, stderr, end',
    [
        ('slurm', 'NODE_FAIL', '', ('NODE_FAIL', 'a node of the job was lost')),
        ('squeue', 'TIMEOUT', '', ('TIMEOUT', 'the time limit was reached')),
        (
            'slurm',
            'FAILED',
            'srun: error: Node failure on n2\n',
            ('FAILED', 'srun lost n2: a node of the job was lost'),
        ),
        ('slurm', 'COMPLETED', '', None),
        # ReFrame's own state of a local job past its time limit.
        ('local', 'TIMEOUT', '', ('TIMEOUT', 'the time limit was reached')),
        ('local', 'FAILURE', 'srun: error: Node failure on n2\n', None),
    ],
)
def test_how_a_scheduler_ended_a_job(backend, state, stderr, end):
    assert scheduler.job_end(backend, state, stderr, ['n1', 'n2']) == end


def test_site_init_names_the_schedulers_it_reads(tmp_path):
    result = clusterbench(
        'site', 'init', '--scheduler', 'pbs', '--system', 'x', '--out', tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(
        'clusterbench: error: --scheduler pbs: clusterbench site init reads Slurm only;'
    ), result.stderr

"""The test cluster's record of itself: ``state.json`` of its run directory,
written after every change, and the lock that serialises bring-up and
teardown of one run directory."""

import contextlib
import fcntl
import json
import os

from clusterbench.core.errors import ClusterbenchError

DEFAULT_RUN_DIR = os.environ.get('CLUSTERBENCH_BOX_DIR', '/run/clusterbench-box')
STATE_FILE = 'state.json'


class State(dict):
    """``state.json`` of a run directory, written after every change."""

    def __init__(self, run_dir, data=None):
        super().__init__(data or {})
        self.run_dir = run_dir

    @property
    def path(self):
        return os.path.join(self.run_dir, STATE_FILE)

    def save(self):
        tmp = self.path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    @classmethod
    def load(cls, run_dir=DEFAULT_RUN_DIR):
        """The recorded state, or ``None`` when no cluster was brought up there."""
        try:
            with open(os.path.join(run_dir, STATE_FILE)) as f:
                return cls(run_dir, json.load(f))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            raise ClusterbenchError(
                f'{run_dir}/{STATE_FILE}: unreadable ({err}); remove the run '
                f'directory by hand after checking nothing of it runs'
            ) from None

    def nodes(self):
        return self.get('nodes', [])

    def node(self, name):
        for node in self.nodes():
            if node['name'] == name:
                return node
        names = ', '.join(n['name'] for n in self.nodes()) or 'none'
        raise ClusterbenchError(
            f'no node {name!r} in the test cluster (nodes: {names})'
        )

    @property
    def slurm_conf(self):
        return os.path.join(self.run_dir, 'etc', 'slurm.conf')

    def env(self):
        """The environment for Slurm's client commands against this cluster."""
        return {**os.environ, 'SLURM_CONF': self.slurm_conf}


@contextlib.contextmanager
def locked(run_dir):
    """Serialize bring-up and teardown of one run directory."""
    parent = os.path.dirname(os.path.abspath(run_dir))
    os.makedirs(parent, exist_ok=True)
    with open(os.path.abspath(run_dir) + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield

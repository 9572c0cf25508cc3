"""A flaky job for ReFrame's --max-retries (tests/test_bad_inputs_round4_retries.py):
its first ``failing`` attempts fail, the next one measures ``rate`` (42 GB/s,
its reference). The attempts are counted in the file ``marker``, which the
test makes its own. Not registered for real runs."""

import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (
    performance_function,
    run_before,
    sanity_function,
    variable,
)


@rfm.simple_test
class RetriedCheck(rfm.RunOnlyRegressionTest):
    valid_systems = ['*']
    valid_prog_environs = ['*']
    #: The file that counts the attempts (an absolute path).
    marker = variable(str, value='')
    #: How a failing attempt fails: 'exit' (no figure: sanity) or 'sleep'
    #: (past the time limit: TIMEOUT).
    how = variable(str, value='exit')
    #: How many attempts fail before one passes.
    failing = variable(int, value=1)
    time_limit = '5s'
    executable = 'sh'
    reference = {'*': {'rate': (42.0, -0.1, 0.1, 'GB/s')}}

    @sanity_function
    def measured(self):
        return sn.assert_found(r'^rate: \S+', self.stdout)

    @performance_function('GB/s')
    def rate(self):
        return sn.extractsingle(r'^rate: (\S+)', self.stdout, 1, float)

    @run_before('run')
    def set_program(self):
        marker = shlex.quote(self.marker)
        fail = 'sleep 60' if self.how == 'sleep' else 'exit 3'
        script = (
            f'n=$(cat {marker} 2>/dev/null || echo 0); n=$((n + 1)); '
            f'echo $n > {marker}; '
            f'if [ $n -le {self.failing} ]; then {fail}; fi; echo "rate: 42.0"'
        )
        # ReFrame joins the options with spaces into the job script.
        self.executable_opts = ['-c', shlex.quote(script)]

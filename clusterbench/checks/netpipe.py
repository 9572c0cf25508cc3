"""NetPIPE (Debian's ``netpipe-openmpi``, ``NPopenmpi``): a whole ping-pong curve.

Two ranks exchange messages from 1 byte up to ``netpipe_upper`` bytes,
NetPIPE's sizes (every power of two and the midpoints between them, plus
±``netpipe_perturbation`` bytes around each). Modes: ``pingpong`` (NetPIPE's
default: latency and one-way bandwidth) and ``bidir`` (``-2 -a``: both ranks
send at once; the bandwidth counts both directions).

Statistic (NetPIPE's own): for each size, the lowest time of three trials,
each the mean over its repetitions (NetPIPE picks the count for about 0.25 s a
trial unless ``netpipe_repeats`` fixes it); ping-pong time is half the round
trip. Figures: ``latency_1B``, ``latency_8B`` (ping-pong), ``bandwidth_1MiB``
(if the sweep reaches it), ``bandwidth_peak`` and ``n_half``; MB/s are 10**6
bytes/s. Inter-node runs on a partition that declares its link's peak also
get ``link_efficiency`` (ping-pong) or ``link_efficiency_bidir``.
"""

import os

from reframe.core.builtins import (
    parameter,
    run_after,
    variable,
)
from reframe.core.exceptions import ReframeError

from clusterbench.bench import curves
from clusterbench.checks import needsfeature
from clusterbench.checks.comm import PLACEMENTS, CommBase
from clusterbench.checks.plugins.references import BASE_INDEX
from clusterbench.checks.shell import quote
from clusterbench.parsers import netpipe

OUTPUT_FILE = 'np.out'


class NetPIPEBase(CommBase):
    """NetPIPE between two ranks; environments with feature ``netpipe``."""

    descr = 'NetPIPE: ping-pong and bidirectional curves between two ranks'
    valid_prog_environs = ['+netpipe']
    reference_file = 'netpipe.yaml'
    reference_index = [*BASE_INDEX, 'mode', 'placement']
    #: inter: two different nodes (skipped on a one-node partition); intra: one
    #: node (shared memory).
    placement = parameter(PLACEMENTS)
    mode = parameter(['pingpong', 'bidir'])
    #: NetPIPE's MPI binary (Debian: NPopenmpi; a NetPIPE build: NPmpi).
    netpipe_executable = variable(str, value='NPopenmpi')
    #: Largest message (-u), a power of two: NetPIPE measures each power of two.
    netpipe_upper = variable(int, value=4 << 20)
    #: Extra sizes ±N bytes around each point (-p); NetPIPE's default is 3,
    #: which triples the run time; the figures are read at powers of two.
    netpipe_perturbation = variable(int, value=0)
    #: Fixed repetitions per trial (-n); 0: NetPIPE's own (~0.25 s a trial).
    netpipe_repeats = variable(int, value=0)
    #: Invalidate the cache between transfers (-I).
    netpipe_invalidate_cache = variable(bool, value=False)
    time_limit = '20m'
    output_program = 'NetPIPE'
    output_parser = netpipe
    output_file = OUTPUT_FILE

    @run_after('init')
    def _a_case_where_no_environment_has_netpipe(self):
        needsfeature.keep_one_case(self, 'netpipe')

    @run_after('setup')
    def _configure(self):
        needsfeature.skip_without(self, 'netpipe')
        upper = self.netpipe_upper
        if upper < 2 or upper & (upper - 1):
            raise ReframeError(
                f'netpipe_upper={upper}: must be a power of two (the sweep is '
                f'checked to reach it)'
            )
        self.place_pairs(1)
        self.executable = quote(self.netpipe_executable)
        opts = [
            '-o',
            OUTPUT_FILE,
            '-u',
            str(upper),
            '-p',
            str(self.netpipe_perturbation),
        ]
        if self.netpipe_repeats:
            opts += ['-n', str(self.netpipe_repeats)]
        if self.netpipe_invalidate_cache:
            opts += ['-I']
        if self.mode == 'bidir':
            # Both ranks send at once; -a pre-posts receives, without which
            # large messages deadlock (NetPIPE's own advice).
            opts += ['-2', '-a']
        self.executable_opts = opts
        self.keep_files = [OUTPUT_FILE]
        repeats = (
            f'{self.netpipe_repeats} repetitions'
            if self.netpipe_repeats
            else 'repetitions chosen for ~0.25 s'
        )
        time = 'half the round trip' if self.mode == 'pingpong' else 'one exchange'
        self.statistic = (
            f'NetPIPE: per size, the lowest of 3 trials of the mean over '
            f'{repeats}; time is {time}'
        )

    def output_expected(self):
        # NetPIPE's running transcript must list the sizes the file has.
        transcript = ''
        for name in (self.job.stdout, self.job.stderr):
            try:
                with open(os.path.join(self.stagedir, name)) as out:
                    transcript += out.read()
            except OSError:
                pass
        return {
            'transcript': transcript,
            'upper': self.netpipe_upper,
            'bidirectional': self.mode == 'bidir',
        }

    def output_figures(self, curve):
        figures = {}
        if self.mode == 'pingpong':
            figures.update(curves.latency_figures(curve, 'latency'))
        figures.update(curves.bandwidth_figures(curve, 'bandwidth'))
        bidir = self.mode == 'bidir'
        name = 'link_efficiency_bidir' if bidir else 'link_efficiency'
        self.efficiency(figures, name, figures['bandwidth_peak'][0], bidir)
        return self.record(figures, [curve])

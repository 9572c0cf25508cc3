"""The noisy-host profile: what tells a run slowed by a host shared with
others (a VM, a node beside other jobs) from a regression, and is on only
where a partition's site config turns it on (``extras.noisy_host``).

- :mod:`~clusterbench.noisyhost.switch`: the switch and its thresholds, read
  from a partition's ``extras`` (the one place that reads them);
- :mod:`~clusterbench.noisyhost.conditions`: the run's conditions measured
  around each launch (``python -m clusterbench.cli.conditions wrap``)
  and which thresholds a run broke (DISTURBED);
- :mod:`~clusterbench.noisyhost.hostprobe`: the tiny fixed workload run
  before and after a launch and compared with the references' sessions;
- :mod:`~clusterbench.noisyhost.confirm`: more runs of a test case outside
  its reference before it is called a regression;
- :mod:`~clusterbench.noisyhost.quiet`: waiting for a quiet machine
  (``--wait-quiet``).

The check plugin that reads it is :mod:`clusterbench.checks.plugins.runconditions`;
docs/noisy-host.md is the user's page. Nothing here knows ReFrame.
"""

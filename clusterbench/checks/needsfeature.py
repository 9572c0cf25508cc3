"""A check that runs only in environments of one feature (``+hpcc``,
``+netpipe``) is a skipped test case, with the feature and how to enable it,
on a partition where no environment has that feature.

ReFrame generates no test case at all for such a partition, so the run's
summary said nothing, and a centre never learnt that its generated site
config left HPCC out (issue 41). :func:`keep_one_case` (after init) adds one
of that partition's environments to the check's ``valid_prog_environs``;
:func:`skip_without` (after setup) skips that test case with the line.
The run's filters (``-n``, ``-x``, ``-t``) still select the check, as any.
"""

from reframe.core.runtime import runtime


def _able(partition, feature):
    """The environments of *partition* in the site config (not only those
    ``-p`` selected: a run that left them out asked to) with *feature*."""
    config = runtime().site_config
    names = config.get(f'systems/0/partitions/@{partition.name}/environs') or []
    return [
        name
        for name in names
        if feature in (config.get(f'environments/@{name}/features') or [])
    ]


def keep_one_case(check, feature):
    """Where no environment of a partition has *feature*, let one of its
    environments (one no partition with the feature has, where there is one)
    make the test case that :func:`skip_without` skips."""
    partitions = runtime().system.partitions
    able = {e.name for p in partitions if _able(p, feature) for e in p.environs}
    stand_ins = []
    for part in partitions:
        if part.environs and not _able(part, feature):
            names = [e.name for e in part.environs]
            stand_ins.append(next((n for n in names if n not in able), names[0]))
    if stand_ins:
        check.valid_prog_environs = [
            *check.valid_prog_environs,
            *dict.fromkeys(stand_ins),
        ]


def _config_file():
    sources = [s for s in runtime().site_config.sources if s != '<builtin>']
    return sources[-1] if sources else 'the site config'


def reason(partition, environ, feature):
    """Why *environ* on *partition* does not run a check of *feature*."""
    where = partition.fullname
    able = ', '.join(_able(partition, feature))
    if able:
        return (
            f'environment {environ.name} of {where} has no feature {feature} '
            f'({able} has)'
        )
    return (
        f'no environment of {where} has the feature {feature}: add '
        f"'{feature}' to an environment's features in {_config_file()} "
        f'(clusterbench site init does where {feature} is installed)'
    )


def skip_without(check, feature):
    """Skip *check*'s test case (after setup) in an environment without
    *feature*, with :func:`reason`."""
    environ = check.current_environ
    if feature not in environ.features:
        check.skip(reason(check.current_partition, environ, feature))

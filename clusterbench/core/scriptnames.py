"""The one validator of names that reach a job or build script.

ReFrame writes a site configuration's names into the scripts it generates
without quoting them: an environment's modules (``module load NAME``), a
partition's access and resource options (``#SBATCH --partition=NAME``),
launcher options (``srun OPTION ...``), environment variable names
(``export NAME=...``); system, partition and environment names become
directories and selections. A module listed as ``openmpi/4.1;touch /tmp/X``
would run ``touch``. Every such name goes through :func:`problem` here,
wherever it comes from: read from the cluster by ``clusterbench site init``,
written into a site config by hand (``common.py``'s builders, the check of
``clusterbench run``), or given to a check with ``-S``.
"""

import re

from clusterbench.core.errors import ClusterbenchError

#: kind -> (what a valid name matches, what it is said to be when it does not).
KINDS = {
    'module': (
        re.compile(r'[A-Za-z0-9_.+/@%=,:-]+\Z'),
        'not a module name (letters, digits and _.+/@%=,:- only)',
    ),
    # ReFrame's own rule for system, partition and environment names.
    'name': (
        re.compile(r'[A-Za-z_][A-Za-z0-9_-]*\Z'),
        'not a ReFrame name (a letter or _, then letters, digits, _ and - only)',
    ),
    # ReFrame's rule for features, and the shell's for variable names.
    'feature': (
        re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z'),
        'not a ReFrame feature (a letter or _, then letters, digits and _ only)',
    ),
    'variable': (
        re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z'),
        'not a variable name (a letter or _, then letters, digits and _ only)',
    ),
    # A word the shell reads as itself (shlex.quote leaves it as it is).
    'option': (
        re.compile(r'[A-Za-z0-9_@%+=:,./-]+\Z'),
        'not a launcher option (letters, digits and _@%+=:,./- only)',
    ),
    # A scheduler option: ReFrame writes it after ``#SBATCH`` (a comment to
    # the shell), where ``--constraint=ib&gpu`` or ``--nodelist=n[1-4]`` are
    # fine; a newline would start a line of the script.
    'directive': (
        re.compile(r'[^\x00-\x1f\x7f]+\Z'),
        'not a scheduler option (one line, no control characters)',
    ),
}


class BadName(ClusterbenchError):
    """A name that must not reach a script; the message says where it is."""


def problem(kind, value):
    """None if *value* is a valid *kind* name, else why not."""
    pattern, why = KINDS[kind]
    if isinstance(value, str) and pattern.match(value):
        return None
    return why


def check(kind, value, where):
    """*value*, or BadName ``<where>: <value!r>: not a ...``."""
    why = problem(kind, value)
    if why:
        raise BadName(f'{where}: {value!r}: {why}')
    return value


def _module_names(modules):
    # ReFrame takes a module as a name or as {'name': ..., 'collection': ...}.
    for module in modules or []:
        yield module.get('name') if isinstance(module, dict) else module


def environment_problem(environ, where='environment'):
    """The first bad name of one ``environments`` entry of a site config, as
    ``<where> 'gnu-openmpi': modules: 'x;y': not a module name (...)``, or None."""
    name = environ.get('name')
    label = f'{where} {name!r}'
    fields = [('name', 'name', [name])]
    fields += _common_fields(environ)
    return _first(label, fields)


def _variable_names(env_vars):
    for pair in env_vars or []:
        yield pair[0] if isinstance(pair, (list, tuple)) and pair else pair


def _common_fields(entry):
    return [
        ('modules', 'module', list(_module_names(entry.get('modules')))),
        ('features', 'feature', list(entry.get('features') or [])),
        ('env_vars', 'variable', list(_variable_names(entry.get('env_vars')))),
    ]


def _first(label, fields):
    for field, kind, values in fields:
        for value in values:
            why = problem(kind, value)
            if why:
                return f'{label}: {field}: {value!r}: {why}'
    return None


def _options(partition):
    found = list(partition.get('access') or [])
    for resource in partition.get('resources') or []:
        # ReFrame fills {num_gpus_per_node} in from the test: a number.
        found += [
            re.sub(r'\{\w+\}', '1', opt) if isinstance(opt, str) else opt
            for opt in resource.get('options') or []
        ]
    return found


def partition_problem(system, partition):
    """The first bad name of one partition of *system*, or None."""
    label = f'system {system!r} partition {partition.get("name")!r}'
    fields = [
        ('name', 'name', [partition.get('name')]),
        ('environs', 'name', list(partition.get('environs') or [])),
        ('access', 'directive', _options(partition)),
        *_common_fields(partition),
    ]
    return _first(label, fields)


def config_problem(site_configuration):
    """The first name of a whole ``site_configuration`` that must not reach a
    script, as one line, or None."""
    for system in site_configuration.get('systems') or []:
        name = system.get('name')
        found = _first(
            f'system {name!r}',
            [('name', 'name', [name]), *_common_fields(system)[:1]],
        )
        for partition in system.get('partitions') or []:
            found = found or partition_problem(name, partition)
        if found:
            return found
    for environ in site_configuration.get('environments') or []:
        found = environment_problem(environ)
        if found:
            return found
    return None

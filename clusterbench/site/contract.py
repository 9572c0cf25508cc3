"""What a site configuration may say in ``extras``: the one registry.

ReFrame accepts any key in a partition's or an environment's ``extras``, so a
typo (``'exclusiv': False``) is silently a different key and the code reads
its default. Every key the code reads is declared here, with its type and
meaning; a config that names another key, or gives a declared one a value
of the wrong type, is refused in one line naming the file, the partition (or
environment) and the key, with the nearest declared key.
``tests/test_structure_contract.py`` greps the code so that no key is read
without being declared here; docs/systems.md has the table.
"""

import dataclasses
import difflib

from clusterbench.core.errors import ClusterbenchError


@dataclasses.dataclass(frozen=True)
class Key:
    """One ``extras`` key: the types its value may have, and what it means."""

    types: tuple
    meaning: str

    def type_names(self):
        return ' or '.join(_TYPE_NAMES[t] for t in self.types)


_TYPE_NAMES = {
    bool: 'True/False',
    int: 'an integer',
    float: 'a number',
    str: 'a string',
    list: 'a list',
    dict: 'a dict',
}
_NUMBER = (int, float)

#: The keys of a partition's ``extras``.
PARTITION = {
    'acceptance': Key((dict,), 'what every node and link must do (docs/acceptance.md)'),
    'conditions': Key((dict,), 'noisy-host thresholds, older place (use noisy_host)'),
    'cpu_kind': Key((str,), 'the machine kind references are indexed by'),
    'exclusive': Key((bool,), 'False lets benchmark jobs share nodes'),
    'gres': Key((str,), "Slurm generic resources (written by 'site init')"),
    'link': Key((dict,), 'the interconnect link: rate_gbps, encoding, width'),
    'link_peak_mbs': Key(_NUMBER, 'the link peak in MB/s (instead of link)'),
    'llc_bytes': Key((int,), 'the last-level cache per node, bytes'),
    'mem_per_node': Key((int,), 'memory per node, bytes'),
    'noisy_host': Key(
        (bool, dict), 'the noisy-host profile: True or thresholds (docs/noisy-host.md)'
    ),
    'nodes': Key((list,), "the partition's node names"),
    'num_nodes': Key((int,), 'how many nodes the partition has'),
    'omp_places': Key((str,), "OMP_PLACES of STREAM (default 'cores')"),
    'omp_proc_bind': Key((str,), "OMP_PROC_BIND of STREAM (default 'spread')"),
    'pcie': Key((dict,), 'the PCIe slot of the network card: gen, lanes'),
    'pcie_peak_mbs': Key(_NUMBER, 'the PCIe slot peak in MB/s (instead of pcie)'),
    'peak_gflops_per_node': Key(_NUMBER, "the node's double-precision peak, GFLOP/s"),
    'portable_bands': Key((dict,), 'bands of portable figures for this partition'),
    'spack_env': Key((str,), "the partition's Spack environment directory"),
    # ReFrame adds these two to every partition's extras when it loads one.
    'scheduler': Key((str,), "the scheduler's name (ReFrame sets it)"),
    'launcher': Key((str,), "the launcher's name (ReFrame sets it)"),
}

#: The keys of a programming environment's ``extras``.
ENVIRONMENT = {
    'blas': Key((str,), 'the BLAS (openblas, blis, mkl)'),
    'blas_inc': Key((str,), "the BLAS's include flags for HPL"),
    'blas_libs': Key((str,), "the BLAS's link flags (instead of blas's)"),
    'compiler': Key((str,), 'the compiler (a Spack package name)'),
    'mpi': Key((str,), 'the MPI (a Spack package name)'),
    'npb_module': Key((str,), 'the module of the NPB this environment runs'),
    'openmp_flag': Key((str,), "the compiler's OpenMP flag"),
}


def runs_here(partition):
    """Whether *partition*'s jobs run on this host (the ``local`` scheduler):
    a ReFrame partition, or a partition entry of a site config (a dict, as a
    run report's test case also has ``scheduler``)."""
    if isinstance(partition, dict):
        return partition.get('scheduler') == 'local'
    return partition.scheduler.registered_name == 'local'


def problem(extras, registry):
    """What is wrong with *extras* against *registry* (one phrase), or ''."""
    for name, value in (extras or {}).items():
        key = registry.get(name)
        if key is None:
            near = difflib.get_close_matches(str(name), registry, n=1)
            hint = f' (did you mean {near[0]!r}?)' if near else ''
            return f'unknown extras key {name!r}{hint}'
        # bool is an int to Python; an integer is a number, a flag is not.
        if isinstance(value, bool) and bool not in key.types:
            ok = False
        else:
            ok = isinstance(value, key.types)
        if not ok:
            return f'extras.{name}: {value!r} is not {key.type_names()}'
    return ''


def check_site(site, source):
    """Refuse the first bad ``extras`` of the ``site_configuration`` *site*
    (a dict, as read from the file *source*) in one line."""
    for system in site.get('systems') or []:
        for part in system.get('partitions') or []:
            check_partition(part.get('name'), part.get('extras'), source)
    for env in site.get('environments') or []:
        if isinstance(env, dict):
            check_environment(env.get('name'), env.get('extras'), source)


def check_partition(name, extras, source):
    found = problem(extras, PARTITION)
    if found:
        raise ClusterbenchError(f'{source}: partition {name}: {found}')


def check_environment(name, extras, source):
    found = problem(extras, ENVIRONMENT)
    if found:
        raise ClusterbenchError(f'{source}: environment {name}: {found}')


def markdown_table():
    """The keys as the Markdown table of docs/systems.md."""
    lines = ['| where | key | type | meaning |', '|---|---|---|---|']
    for where, registry in (('partition', PARTITION), ('environment', ENVIRONMENT)):
        for name, key in registry.items():
            lines.append(f'| {where} | `{name}` | {key.type_names()} | {key.meaning} |')
    return '\n'.join(lines)

"""What a site configuration may say in ``extras``: the one registry.

ReFrame accepts any key in a partition's or an environment's ``extras``, so a
typo (``'exclusiv': False``) is silently a different key and the code reads
its default. Every key the code reads is declared here, with its type and
meaning; a config that names another key, or gives a declared one a value
of the wrong type, is refused in one line naming the file, the partition (or
environment) and the key, with the nearest declared key.
``tests/architecture/test_structure_contract.py`` greps the code so that no key is read
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


def _key(types, meaning, default=None):
    """A field of :class:`PartitionSpec` that is an ``extras`` key."""
    metadata = {'key': Key(types, meaning)}
    if isinstance(default, (dict, list)):
        return dataclasses.field(
            default_factory=lambda: type(default)(default), metadata=metadata
        )
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class PartitionSpec:
    """What a partition's ``extras`` say, typed, with their defaults: built
    and validated once per partition (:meth:`of`); code reads a partition's
    keys here, never from its ``extras``. A key ``None`` was not declared."""

    #: The partition's name (``system:partition`` of a ReFrame partition).
    name: str = ''
    #: The whole ``extras``, for helpers below this layer that take them.
    extras: dict = dataclasses.field(default_factory=dict)
    acceptance: dict = _key(
        (dict,), 'what every node and link must do (docs/acceptance.md)', {}
    )
    conditions: dict = _key(
        (dict,), 'noisy-host thresholds, older place (use noisy_host)', {}
    )
    cpu_kind: str = _key((str,), 'the machine kind references are indexed by')
    exclusive: bool = _key((bool,), 'False lets benchmark jobs share nodes', True)
    gres: str = _key((str,), "Slurm generic resources (written by 'site init')")
    link: dict = _key((dict,), 'the interconnect link: rate_gbps, encoding, width')
    link_peak_mbs: float = _key(_NUMBER, 'the link peak in MB/s (instead of link)')
    llc_bytes: int = _key((int,), 'the last-level cache per node, bytes')
    mem_per_node: int = _key((int,), 'memory per node, bytes')
    noisy_host: object = _key(
        (bool, dict),
        'the noisy-host profile: True or thresholds (docs/noisy-host.md)',
        False,
    )
    nodes: list = _key((list,), "the partition's node names")
    num_nodes: int = _key((int,), 'how many nodes the partition has')
    omp_places: str = _key((str,), "OMP_PLACES of STREAM (default 'cores')", 'cores')
    omp_proc_bind: str = _key(
        (str,), "OMP_PROC_BIND of STREAM (default 'spread')", 'spread'
    )
    pcie: dict = _key((dict,), 'the PCIe slot of the network card: gen, lanes')
    pcie_peak_mbs: float = _key(_NUMBER, 'the PCIe slot peak in MB/s (instead of pcie)')
    peak_gflops_per_node: float = _key(
        _NUMBER, "the node's double-precision peak, GFLOP/s"
    )
    portable_bands: dict = _key(
        (dict,), 'bands of portable figures for this partition', {}
    )
    spack_env: str = _key((str,), "the partition's Spack environment directory")
    # ReFrame adds these two to every partition's extras when it loads one;
    # the scheduler is the partition's own (a config entry's too).
    scheduler: str = _key((str,), "the scheduler's name (ReFrame sets it)", '')
    launcher: str = _key((str,), "the launcher's name (ReFrame sets it)")

    @property
    def runs_here(self):
        """Whether the partition's jobs run on this host (``local``)."""
        return self.scheduler == 'local'

    @classmethod
    def of(cls, partition, source=None):
        """The spec of *partition*: a ReFrame partition (built once, kept
        for the session), or a partition entry of a site config (a dict).
        A bad key is one line naming *source* (ReFrame's: its config file)."""
        if isinstance(partition, dict):
            name = partition.get('name')
            return _build(
                name,
                name,
                partition.get('extras'),
                partition.get('scheduler'),
                source,
            )
        kept = _BUILT.get(id(partition))
        if kept is None or kept[0] is not partition:
            spec = _build(
                partition.name,
                partition.fullname,
                partition.extras,
                partition.scheduler.registered_name,
                source or _config_file(),
            )
            kept = _BUILT[id(partition)] = (partition, spec)
        return kept[1]


#: The specs of the session's ReFrame partitions (id -> (partition, spec)).
_BUILT = {}


def _config_file():
    from reframe.core import runtime
    from reframe.core.exceptions import ReframeFatalError

    try:
        return runtime.runtime().site_config.sources[-1]
    except ReframeFatalError:
        # Outside a ReFrame session: a partition object made by hand.
        return 'the ReFrame configuration'


def _build(name, fullname, extras, scheduler, source):
    extras = dict(extras or {})
    check_partition(name, extras, source)
    given = {
        k: v for k, v in extras.items() if k not in ('scheduler', 'name', 'extras')
    }
    return PartitionSpec(
        name=fullname or '', extras=extras, scheduler=scheduler or '', **given
    )


#: The keys of a partition's ``extras``: the keyed fields of PartitionSpec.
PARTITION = {
    f.name: f.metadata['key']
    for f in dataclasses.fields(PartitionSpec)
    if 'key' in f.metadata
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
    return PartitionSpec.of(partition).runs_here


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

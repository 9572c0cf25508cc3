"""``clusterbench site init``: a site configuration generated from the cluster.

Reads the scheduler (partitions, nodes, MPI plugins;
:mod:`clusterbench.site.scheduler`: Slurm), the programming environments
(modules, else the MPI wrappers on PATH; :mod:`clusterbench.site.sitefacts`)
and asks one node per partition for its processor, CPU kind and whether two
nodes are one host (:mod:`clusterbench.site.nodeprobe`); writes
``site_configs/NAME.py`` composing ``common.py`` as ``local.py`` and
``box.py`` do, with the centre's ``--access`` options, and a pinned
``spack_envs/NAME/`` environment (:mod:`clusterbench.site.spackskeleton`).
What it cannot determine is written as a ``# TODO`` comment with the reason, never
guessed; existing files are kept unless ``--force``. The command
(:mod:`clusterbench.cli.site`) then runs one tiny check (:data:`VALIDATION`)
on every partition it returns.
"""

import os
import re
import socket
import sys
import textwrap

from clusterbench.core import outputpath, scriptnames
from clusterbench.core.errors import ClusterbenchError
from clusterbench.site import benchfind, nodeprobe, scheduler, sitefacts, spackskeleton
from clusterbench.site.pysource import Code, Note, comment_lines, render, todo_lines
from clusterbench.site.sitefacts import Todo

#: The tiny check that validates a generated configuration on each partition.
VALIDATION = [
    '-n',
    '^CGSolverCheck%stencil=7%variant=classic%ranks_per_node=all',
    '-S',
    'problem_class=S',
    # Seconds of work: a job still running after minutes hangs (some MPICH
    # builds can hang in MPI_Finalize, see box.py); it fails, not waits 30 min.
    '-S',
    'time_limit=3m',
    # Two more attempts of a job that failed: a hang in MPI_Finalize is
    # sporadic (more frequent on a loaded host: two hangs in a row were seen
    # beside a CPU hog), a broken configuration fails all three (and says so).
    '--max-retries',
    '2',
]


def processor(part, detected):
    """The partition's processor: Slurm's counts (what a job gets) with the
    architecture and model ReFrame detected on one of its nodes."""
    facts = {}
    if isinstance(detected, Todo):
        facts['arch'] = detected
    else:
        for key in ('arch', 'vendor', 'model', 'platform'):
            if detected.get(key):
                facts[key] = detected[key]
    facts['num_cpus'] = part.cpus
    facts['num_sockets'] = part.sockets
    facts['num_cpus_per_core'] = part.threads_per_core
    if isinstance(part.cpus, int) and isinstance(part.sockets, int):
        facts['num_cpus_per_socket'] = part.cpus // part.sockets
    else:
        facts['num_cpus_per_socket'] = Todo('needs CPUs and sockets from Slurm')
    if not isinstance(detected, Todo):
        if detected.get('num_cpus') == part.cpus and detected.get('topology'):
            facts['topology'] = detected['topology']
        else:
            facts['topology'] = Todo(
                f'the node shows {detected.get("num_cpus")} CPUs, Slurm gives a job '
                f"{part.cpus}: the counts above are Slurm's, no topology written"
            )
    return facts


#: What keeps each MPI off shared memory between "nodes" that are one host
#: (namespaces, containers): TCP on the device between them only.
NETWORK_ONLY = {
    'openmpi': lambda dev: [
        ['OMPI_MCA_pml', 'ob1'],
        ['OMPI_MCA_btl', 'tcp,self'],
        ['OMPI_MCA_btl_tcp_if_include', dev],
    ],
    # MPICH and MVAPICH over UCX.
    'ucx': lambda dev: [['UCX_TLS', 'tcp,self'], ['UCX_NET_DEVICES', dev]],
}


def network_only(mpi, device):
    """The variables that keep *mpi* on the network device *device*."""
    return NETWORK_ONLY['openmpi' if mpi == 'openmpi' else 'ucx'](device)


def _environ_code(env, system, plugin, device=None):
    if isinstance(env.mpi, Todo):
        return Todo(f'environment {env.name}: {env.mpi.reason}')
    notes = [
        f'{what}: {value.reason}'
        for what, value in (('compiler', env.compiler), ('blas', env.blas))
        if isinstance(value, Todo)
    ]
    if isinstance(plugin, Todo):
        notes.append(f'SLURM_MPI_TYPE (the srun --mpi= plugin): {plugin.reason}')
        env_vars = []
    else:
        env_vars = [['SLURM_MPI_TYPE', plugin]]
    remark = ''
    if isinstance(device, str):
        # Done, not to do: said as a plain comment, not a TODO.
        remark = '\n'.join(
            textwrap.wrap(
                f'The nodes are one host: MPI held to TCP on {device}, else '
                f'"inter-node" messages would pass through shared memory.',
                width=88,
                initial_indent='# ',
                subsequent_indent='# ',
            )
        )
        remark += '\n'
        env_vars += network_only(env.mpi, device)
    elif isinstance(device, Todo):
        notes.append(f'whether MPI crosses a network between nodes: {device.reason}')
    args = {'target_systems': [system], 'env_vars': env_vars}
    if env.features or env.extras:
        # Done, not to do: a plain comment.
        found = ', '.join([*env.features, *env.extras])
        remark += '\n'.join(
            comment_lines(
                f'{found}: installed for {env.mpi}, found by clusterbench site '
                f'init (docs/systems.md, "Enabling HPCC, NetPIPE, OSU, IMB and '
                f'NPB on a generated config")',
                '',
            )
        )
        remark += '\n'
    if env.features:
        args['extra_features'] = env.features
    if env.kind == 'debian' and env.mpi in ('openmpi', 'mpich'):
        builder = f"common['gnu_{env.mpi}']"
    else:
        builder = "common['module_environment']"
        args = {
            'name': env.name,
            'mpi': env.mpi,
            'modules': env.modules,
            **args,
            'compiler': env.compiler if isinstance(env.compiler, str) else 'TODO',
            'blas': env.blas if isinstance(env.blas, str) else 'TODO',
        }
        if env.extras:
            args['extras'] = env.extras
    if env.kind == 'debian' and isinstance(env.blas, Todo):
        notes.append('common.py declares OpenBLAS for this environment')
    body = ''.join(f'    {k}={render(v, 4)},\n' for k, v in args.items())
    todo = ''.join(f'{line}\n' for note in notes for line in todo_lines(note, ''))
    return Code(f'{remark}{todo}{builder}(\n{body})')


def config_source(
    system,
    partitions,
    modules_system,
    environs,
    plugins,
    topologies,
    kinds=None,
    access=(),
    device=None,
):
    """The text of ``site_configs/<system>.py``.

    *kinds*: each partition's cpu_kind (or a Todo); *access*: scheduler
    options every partition's jobs get (account, QoS, reservation); *device*:
    the network device MPI is held to where nodes are one host.
    """
    env_names = [e.name for e in environs if not isinstance(e.mpi, Todo)]
    kinds = kinds or {}
    parts = []
    for part in partitions:
        features = _features(part)
        extras = {
            'mem_per_node': part.mem_mb * 2**20
            if isinstance(part.mem_mb, int)
            else part.mem_mb,
            'cpu_kind': kinds.get(part.name, Todo('the CPU kind was not read')),
            'num_nodes': len(part.nodes),
            'nodes': part.nodes,
            'link': Todo(
                'the link for efficiency, e.g. {"rate_gbps": 100, "encoding": '
                '"64b66b", "width": 4} (not readable from Slurm)'
            ),
            'exclusive': Note(
                "Whole nodes for every benchmark job (ReFrame's exclusive_access, "
                'sbatch --exclusive): a figure measured beside another job is not '
                "the node's. False lets jobs share nodes.",
                True,
            ),
        }
        if len(part.nodes) > 1:
            extras['acceptance'] = Todo(
                'what every node and link must do (min_spread, '
                'link_bandwidth_min_mbs, link_latency_max_us): a site decision'
            )
        entry = {
            'name': part.name,
            'descr': f'Slurm partition {part.name}: {len(part.nodes)} node(s)',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': [*nodeprobe.srun_options(part), *access],
            'environs': env_names or Todo('no programming environment was found'),
            # One job per node at a time: a figure measured beside another
            # job on its node is not the node's.
            'max_jobs': max(len(part.nodes), 1),
            'features': features,
            'processor': processor(part, topologies[part.name]),
            'extras': extras,
        }
        if part.gres is not None:
            entry['resources'] = _resources(part, entry['extras'])
        parts.append(entry)
    host = socket.gethostname().split('.')[0]
    nodes = [n for part in partitions for n in part.nodes]
    system_entry = {
        'name': system,
        'descr': f'{system} (generated by clusterbench site init)',
        'hostnames': Note(
            'This login node and the compute nodes Slurm lists (a job that runs '
            'reframe on a node finds the system too): each name, or where names '
            'differ only in their numbers, one pattern for them.',
            hostname_patterns(host, nodes),
        ),
        'modules_system': modules_system,
        'partitions': parts,
    }
    environments = [
        _environ_code(e, system, _plugin(e, plugins), device) for e in environs
    ] or [Todo('no MPI found (no MPI modules, no MPI wrappers on PATH)')]
    configuration = {
        'systems': [system_entry],
        'environments': environments,
        'general': Code("common['general']()"),
        # The results database and the perflogs under the results root.
        'storage': Code("common['storage']()"),
        'logging': Code("common['logging']()"),
    }
    todos = todo_count(render(configuration))
    found_by = 'modules' if modules_system != 'nomod' else 'MPI wrappers on PATH'
    header = textwrap.dedent(f'''\
        """System ``{system}``: generated by ``clusterbench site init``.

        Read from Slurm (partitions, nodes, MPI plugins), the programming
        environments ({found_by})
        and ReFrame's processor detection on one node of each partition.
        {todos} fact(s) could not be determined: each is a ``# TODO`` below,
        with the reason. The launcher is ``srun``; each environment sets the
        ``--mpi=`` plugin of its MPI through ``SLURM_MPI_TYPE``.
        """

        import runpy

        from clusterbench.core import paths, scriptnames

        # common.py beside this file if the site keeps its own copy, else
        # clusterbench's (a checkout's, or the one packaged with the wheel).
        common = runpy.run_path(paths.site_config('common.py', beside=__file__))

        # Off for dedicated nodes; a partition on shared hosts turns it on with
        # 'noisy_host': True in its extras (docs/noisy-host.md).
        site_configuration = ''')
    return header + render(configuration) + '\n'


def hostname_patterns(login, nodes):
    """Patterns that match *login* and each of *nodes* (with or without a
    domain): names that differ only in their digits (n001, n002) share one
    pattern (``^n\\d+(\\.|$)``), a name alone in its shape is matched
    exactly, escaped."""
    shapes = {}
    for name in [login, *nodes]:
        shapes.setdefault(re.sub(r'\d+', '0', name), []).append(name)
    patterns = []
    for names in shapes.values():
        names = list(dict.fromkeys(names))
        if len(names) == 1:
            body = re.escape(names[0])
        else:
            body = r'\d+'.join(re.escape(p) for p in re.split(r'\d+', names[0]))
        patterns.append(f'^{body}(\\.|$)')
    return patterns


def _features(part):
    """The partition's Slurm features that are ReFrame features (letters,
    digits and _); each other one is a TODO, left out: ReFrame would refuse
    the configuration (``ib-hdr``), and checks select on features."""
    found = {*part.features, *(['multinode'] if len(part.nodes) > 1 else [])}
    features = []
    for name in sorted(found):
        why = scriptnames.problem('feature', name)
        features.append(
            Todo(f'Slurm feature {name!r} left out: {why}') if why else name
        )
    return features


def _resources(part, extras):
    """ReFrame resources of the partition's generic resources (``--gres=``
    options in the job script), or a Todo."""
    if isinstance(part.gres, Todo):
        return part.gres
    extras['gres'] = part.gres
    names = sorted({g.split(':')[0] for g in part.gres.split(',')})
    for name in names:
        why = scriptnames.problem('feature', name)
        if why:
            return Todo(f'resources for Slurm gres {name!r}: {why}')
    return [
        {'name': g, 'options': [f'--gres={g}:{{num_{g}s_per_node}}']} for g in names
    ]


def check_names(partitions, environs, plugins):
    """Refuse, in one line naming where it was read, a name that would reach
    a job script or a path as something else: a module ``openmpi/4.1;touch
    /tmp/X`` would be run by ``module load``, a partition ``../../tmp/P``
    would put its spack.yaml outside ``--out``. (Features and generic
    resources that are not ReFrame names are left out as TODOs.)"""
    for part in partitions:
        scriptnames.check('name', part.name, 'scontrol show partition')
    for env in environs:
        for module in env.modules:
            scriptnames.check('module', module, 'module -t avail')
        scriptnames.check('name', env.name, 'environment')
    # ReFrame writes `export SLURM_MPI_TYPE=<plugin>` unquoted.
    for plugin in plugins if isinstance(plugins, list) else []:
        scriptnames.check('option', plugin, 'srun --mpi=list')


#: How many names a line lists before it counts the rest.
LISTED = 10


def listed(names, most=LISTED):
    """*names* joined, the first *most* of them and then how many more: the
    partitions of a big cluster are no line to read."""
    names = list(names)
    if len(names) <= most:
        return ', '.join(names)
    return f'{", ".join(names[:most])}, ... and {len(names) - most:,} more'


def _plugin(env, plugins):
    if isinstance(env.mpi, Todo):
        return env.mpi
    return scheduler.named('slurm').plugin_for(env.mpi, plugins)


def todo_count(text):
    """The TODOs of a generated file: one ``# TODO:`` line each (the file's
    header and the CLI's last line both say this number)."""
    return text.count('# TODO:')


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f'{path}.tmp{os.getpid()}'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


#: What site init says where it cannot read the cluster: it reads Slurm only.
SLURM_ONLY = (
    'clusterbench site init reads Slurm only; for another scheduler write '
    'site_configs/NAME.py by hand (site_configs/example-site.py is a worked example)'
)


def init(args, out=sys.stdout):
    """Write the configuration and the Spack skeleton of ``args.system``;
    return the path of the configuration and the partitions it names."""
    reads = scheduler.named(args.scheduler)
    if reads is None:
        raise ClusterbenchError(f'--scheduler {args.scheduler}: {SLURM_ONLY}')
    scriptnames.check('name', args.system, '--system')
    for option in args.access:
        scriptnames.check('directive', option, '--access')
        if not option.startswith('-'):
            raise ClusterbenchError(
                f'--access {option!r}: not a scheduler option (e.g. --access='
                f'--account=NAME, --access=--qos=NAME)'
            )
    root = os.path.abspath(args.out)
    config_path = os.path.join(root, 'site_configs', f'{args.system}.py')
    envs_dir = os.path.join(root, 'spack_envs')
    system_envs = os.path.join(envs_dir, args.system)
    for path in (config_path, system_envs):
        outputpath.check(path)  # too long, or under a file: before any command
        if os.path.exists(path) and not args.force:
            raise ClusterbenchError(f'{path}: exists; not overwritten (use --force)')
    partitions = reads.partitions()
    if isinstance(partitions, Todo):
        raise ClusterbenchError(
            f'cannot read the cluster: {partitions.reason} ({SLURM_ONLY})'
        )
    if not partitions:
        raise ClusterbenchError('Slurm shows no partition')
    modules_system, environs = sitefacts.environs()
    plugins = reads.mpi_plugins()
    # Before anything runs (srun --partition=) or is written.
    check_names(partitions, environs, plugins)
    for part in partitions:
        outputpath.check(os.path.join(system_envs, part.name, 'spack.yaml'))
    print(
        f'{len(partitions):,} partition(s): {listed(p.name for p in partitions)}',
        file=out,
    )
    print(f'environments: {", ".join(e.name for e in environs) or "none"}', file=out)
    topologies, kinds, device, benchmarks = {}, {}, None, {}
    for part in partitions:
        print(
            f'{part.name}: detecting the processor of one node ...',
            file=out,
            flush=True,
        )
        topologies[part.name] = nodeprobe.node_topology(part)
        kinds[part.name] = nodeprobe.node_kind(part)
        device = device or nodeprobe.shared_host_device(part)
        benchmarks[part.name] = benchfind.on_node(part)
        print(benchfind.said(part.name, benchmarks[part.name]), file=out)
    modules = (
        benchfind.in_modules(sitefacts.available_modules())
        if modules_system != 'nomod'
        else {}
    )
    for note in benchfind.enable(benchmarks, environs, modules):
        print(note, file=out)
    enabled = [
        ' '.join([e.name, *(f'+{f}' for f in e.features)])
        + ''.join(f' {k}={v}' for k, v in e.extras.items())
        for e in environs
        if e.features or e.extras
    ]
    print(f'benchmark features: {"; ".join(enabled) or "none"}', file=out)
    if isinstance(device, str):
        scriptnames.check('option', device, 'ip route get')
    text = config_source(
        args.system,
        partitions,
        modules_system,
        environs,
        plugins,
        topologies,
        kinds,
        args.access,
        device,
    )
    _write(config_path, text)
    print(f'wrote {config_path}', file=out)
    for path in spackskeleton.shared_files(envs_dir):
        print(f'wrote {path}', file=out)
    for part in partitions:
        path = os.path.join(system_envs, part.name, 'spack.yaml')
        found = topologies[part.name]
        target = spackskeleton.portable_target(
            found.get('arch') if isinstance(found, dict) else None
        )
        _write(path, spackskeleton.text(args.system, part.name, environs, target))
        print(f'wrote {path}', file=out)
    print(f'{todo_count(text)} TODO(s) in {config_path}', file=out)
    return config_path, partitions


def validation_nodes(part):
    """How many nodes the validating check of partition *part* takes."""
    return 2 if len(part.nodes) > 1 else 1

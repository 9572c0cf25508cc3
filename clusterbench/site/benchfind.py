"""The benchmarks installed on a cluster, found by ``clusterbench site init``
and enabled in the configuration it writes (issue 41: a generated config
that never ran the HPCC and NetPIPE the nodes had).

One short job per partition looks on a node's PATH (and ``/usr/bin``) for
``hpcc``, NetPIPE (``NPopenmpi``, ``NPmpich``, ``NPmpi``), OSU
(``osu_latency``), IMB (``IMB-MPI1``) and NPB's ``<bench>.<class>.x``, and
tells the MPI each binary is linked with; the login node's modules are read
for the same names. :func:`enable` turns what was found into environment
features (``hpcc``, ``netpipe``, ``osu``, ``imb``: what the checks select
on), modules and the ``npb_module`` extra; :func:`said` is the one line per
partition that says it. A benchmark found on some partitions only is not
enabled (an environment's features hold on every partition), and said so.
"""

import dataclasses
import re

from clusterbench.site import nodeprobe, stacknames
from clusterbench.site.sitefacts import Todo, command
from clusterbench.site.sitefacts import said as last_line

#: What the probe looks for, in the order a line names them: key, title,
#: binaries on PATH, module names (before the first '/').
BENCHMARKS = (
    ('hpcc', 'hpcc', ('hpcc',), ('hpcc',)),
    ('netpipe', 'NetPIPE', ('NPopenmpi', 'NPmpich', 'NPmpi'), ('netpipe',)),
    ('osu', 'OSU', ('osu_latency',), ('osu-micro-benchmarks', 'osu')),
    ('imb', 'IMB', ('IMB-MPI1',), ('intel-mpi-benchmarks', 'imb')),
    ('npb', 'NPB', (), ('npb',)),
)
TITLES = {key: title for key, title, _, _ in BENCHMARKS}

#: NPB's binaries: <bench>.<class>.x (3.4) or <bench>.<class>.<nprocs> (3.3).
NPB_BINARY = r'^(bt|cg|ep|ft|is|lu|mg|sp)\.[SWABCDEF]\.(x|[0-9]+)$'

#: Run on one node: "found NAME PATH LIBS" per binary found.
NODE_SCRIPT = f"""
for name in {' '.join(b for _, _, bins, _ in BENCHMARKS for b in bins)}; do
  path=$(command -v "$name") || {{ [ -x "/usr/bin/$name" ] && path=/usr/bin/$name; }} \\
    || continue
  libs=$(ldd "$path" 2>/dev/null | grep -o -E 'lib(mpi|mpich|open-pal)[^ ]*' | sort -u)
  echo found "$name" "$path" $libs
done
npb=$(compgen -c | grep -E '{NPB_BINARY}' | head -1)
[ -n "$npb" ] && echo found npb "$(command -v "$npb")"
exit 0
"""

#: Debian's NetPIPE binaries name their MPI; the NetPIPE check runs NPopenmpi.
NAMED_MPI = {'NPopenmpi': 'openmpi', 'NPmpich': 'mpich'}


@dataclasses.dataclass(frozen=True)
class Found:
    """A benchmark found: on PATH (*path*) or as a module (*module*)."""

    key: str
    path: str = ''
    module: str = ''
    #: The MPI family it is linked with (openmpi, mpich), or '' unknown.
    mpi: str = ''

    def shown(self):
        return self.path or f'module {self.module}'


def linked_family(libs):
    """The MPI family ``ldd`` names (as :mod:`clusterbench.checks.comm` tells it)."""
    text = ' '.join(libs)
    if re.search(r'libmpi\.so\.4\d', text) or 'libopen-pal' in text:
        return 'openmpi'
    if re.search(r'libmpich|libmpi\.so\.12', text):
        return 'mpich'
    return ''


def parse(text):
    """The probe's output: {key: Found}, the first binary of each key."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 3 or words[0] != 'found':
            continue
        name, path, libs = words[1], words[2], words[3:]
        key = next((k for k, _, bins, _ in BENCHMARKS if name in bins), name)
        if key in found or key not in TITLES:
            continue
        mpi = NAMED_MPI.get(name) or linked_family(libs)
        found[key] = Found(key, path=path, mpi=mpi)
    return found


def on_node(partition, env=None, timeout=180):
    """{key: Found} of the binaries on one node of *partition*, or a Todo."""
    code, out, err = command(
        [
            'srun',
            *nodeprobe.srun_options(partition),
            '--nodes=1',
            '--ntasks=1',
            '--time=5',
            'bash',
            '-c',
            NODE_SCRIPT,
        ],
        timeout=timeout,
        env=env,
    )
    if code != 0:
        return Todo(f'the benchmarks on {partition.name}: {last_line(out, err)}')
    return parse(out)


def in_modules(modules):
    """{key: [Found]} of the benchmark modules among *modules* (the login
    node's ``module -t avail``)."""
    found = {}
    for module in modules:
        head = module.split('/')[0].lower()
        for key, _, _, names in BENCHMARKS:
            if head in names:
                mpi = next(
                    (m for m in ('openmpi', 'mpich', 'mvapich', 'impi') if m in module),
                    '',
                )
                found.setdefault(key, []).append(Found(key, module=module, mpi=mpi))
    return found


def said(part_name, found):
    """The line that says what *part_name*'s nodes have: ``compute: found
    hpcc (/usr/bin/hpcc), NetPIPE (/usr/bin/NPopenmpi); not found: OSU, IMB,
    NPB (...)``."""
    if isinstance(found, Todo):
        return f'{part_name}: benchmarks not read: {found.reason}'
    have = [f'{TITLES[k]} ({found[k].shown()})' for k in TITLES if k in found]
    missing = [TITLES[k] for k in TITLES if k not in found]
    line = f'{part_name}: found {", ".join(have) or "none"}'
    if missing:
        line += (
            f'; not found: {", ".join(missing)} (OSU, IMB and NPB are then built '
            f'from their releases; docs/systems.md, "Enabling HPCC, NetPIPE, OSU, '
            f'IMB and NPB on a generated config")'
        )
    return line


def _family(env):
    launcher = stacknames.mpi_launcher(env.mpi) if isinstance(env.mpi, str) else None
    return {'openmpi': 'openmpi', 'hydra': 'mpich'}.get(launcher, '')


def _environ_for(found, environs):
    """The environment *found* runs in: the one of its MPI, or the only one."""
    usable = [e for e in environs if isinstance(e.mpi, str)]
    if found.mpi:
        matching = [e for e in usable if _family(e) == found.mpi or e.mpi == found.mpi]
        return matching[0] if matching else None
    return usable[0] if len(usable) == 1 else None


def enable(found_by_partition, environs, module_found=None):
    """Give *environs* (sitefacts.Environ) the features, modules and extras of
    the benchmarks found on every partition; return the lines of what was
    not enabled and why."""
    notes = []
    probed = {p: f for p, f in found_by_partition.items() if not isinstance(f, Todo)}
    everywhere = {}
    for key in TITLES:
        where = [p for p, f in probed.items() if key in f]
        if probed and len(where) == len(probed):
            everywhere[key] = next(iter(probed.values()))[key]
        elif where:
            notes.append(
                f'{TITLES[key]}: found on {", ".join(where)} only, not enabled (an '
                f"environment's features hold on every partition)"
            )
    for key, found in everywhere.items():
        env = _environ_for(found, environs)
        if key == 'npb':
            notes.append(
                f'NPB: {found.path} on the nodes; give -S npb_prefix='
                f'{found.path.rsplit("/", 1)[0]} (NPB takes a prefix per session)'
            )
        elif key == 'netpipe' and found.mpi != 'openmpi':
            notes.append(
                f'NetPIPE: {found.path} is not NPopenmpi, which the check runs: '
                f'-S netpipe_executable={found.path.rsplit("/", 1)[-1]}'
            )
        elif env is None:
            notes.append(
                f'{TITLES[key]}: {found.path} (linked with '
                f'{found.mpi or "an MPI not told"}): no environment of that MPI, '
                f'not enabled'
            )
        elif key not in env.features:
            env.features.append(key)
    for key, modules in (module_found or {}).items():
        if key in everywhere:
            continue  # on the nodes' PATH already
        for found in modules:
            env = _environ_for(found, [e for e in environs if e.kind == 'modules'])
            if env is None:
                notes.append(
                    f'{TITLES[key]}: module {found.module}: which MPI not told'
                )
            elif key == 'npb':
                env.extras.setdefault('npb_module', found.module)
            elif key not in env.features:
                env.modules.append(found.module)
                env.features.append(key)
    return notes

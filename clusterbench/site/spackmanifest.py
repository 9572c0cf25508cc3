"""A Spack environment's ``spack.yaml``, read without Spack: its includes
(paths relative to the environment), its ``definitions`` and its ``specs``
(plain specs, ``$name`` references and matrices) expanded the way Spack
expands them, and the project's conventions for what an environment holds.
Problems are one line each, naming the file and the key at fault.
"""

import collections
import dataclasses
import functools
import os
import re

import yaml

from clusterbench.core import paths
from clusterbench.core.errors import ClusterbenchError
from clusterbench.site import stacknames

PROJECT = paths.CHECKOUT
ENVS_ROOT = os.path.join(PROJECT, 'spack_envs')
MANIFEST = 'spack.yaml'
LOCKFILE = 'spack.lock'
#: Directories of ENVS_ROOT that are not systems.
SHARED_DIRS = ('common',)
#: Systems kept as templates a centre copies: no site configuration uses them.
#: (example-site has one now: site_configs/example-site.py, checked with it.)
TEMPLATE_SYSTEMS = ()

#: The file that names the upstream benchmarks the checks build, as Spack
#: roots without MPI: ``definitions`` ``mpi_benchmarks`` (once per MPI
#: provider of an environment) and ``serial_benchmarks`` (once). Every
#: environment includes it; a new benchmark built by Spack is one line there.
BENCHMARKS_FILE = os.path.join('common', 'benchmarks.yaml')
#: Variants of a benchmark root a site may set to its own value (STREAM's
#: array must outgrow the node's caches): roots are compared without them.
TUNABLE_VARIANTS = ('stream_array_size',)
MPI_PROVIDERS = stacknames.SPACK_MPI_PROVIDERS
BLAS_PROVIDERS = stacknames.SPACK_BLAS_PROVIDERS
#: Generic targets: a lock pinned to one of them runs on any node of its family.
PORTABLE_TARGETS = (
    'x86_64',
    'x86_64_v2',
    'x86_64_v3',
    'x86_64_v4',
    'aarch64',
    'ppc64le',
    'riscv64',
)
COMPILER_LANGUAGES = ('c', 'cxx', 'fortran')


class SpackEnvError(ClusterbenchError):
    """A Spack environment or lock that breaks the project's conventions."""


@dataclasses.dataclass
class Environment:
    """One parsed environment directory."""

    path: str
    #: The ``spack:`` mapping of spack.yaml.
    manifest: dict
    #: Included files, resolved, in the order listed.
    includes: list
    #: packages: the environment's own entries over those of its includes.
    packages: dict
    concretizer: dict
    #: The root specs, expanded, in the order Spack lists them.
    specs: list

    @property
    def manifest_path(self):
        return os.path.join(self.path, MANIFEST)

    @property
    def lock_path(self):
        return os.path.join(self.path, LOCKFILE)

    def mpi_providers(self):
        return requirement_names(self.packages.get('mpi', {}).get('require'))


def relative(path):
    try:
        rel = os.path.relpath(path, PROJECT)
    except ValueError:
        return path
    return path if rel.startswith('..') else rel


def _load_yaml(path, what):
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except OSError as err:
        raise SpackEnvError(
            f'{relative(path)}: cannot read {what}: {err.strerror}'
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, 'problem_mark', None)
        line = f':{mark.line + 1}' if mark else ''
        problem = getattr(err, 'problem', None) or err
        raise SpackEnvError(f'{relative(path)}{line}: YAML error: {problem}') from None
    return {} if data is None else data


def _mapping(value, path, key):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpackEnvError(f'{relative(path)}: {key}: expected a mapping')
    return value


def load(path):
    """Parse the environment in directory *path* (spack.yaml and its includes)."""
    manifest_path = os.path.join(path, MANIFEST)
    data = _load_yaml(manifest_path, MANIFEST)
    if not isinstance(data, dict) or not isinstance(data.get('spack'), dict):
        raise SpackEnvError(f'{relative(manifest_path)}: spack: expected a mapping')
    manifest = data['spack']
    includes, layers = [], []
    for i, entry in enumerate(manifest.get('include') or []):
        inc = entry.get('path') if isinstance(entry, dict) else entry
        if not isinstance(inc, str):
            raise SpackEnvError(
                f'{relative(manifest_path)}: include[{i}]: expected a path'
            )
        inc_path = os.path.normpath(os.path.join(path, os.path.expandvars(inc)))
        if not os.path.isfile(inc_path):
            raise SpackEnvError(
                f'{relative(manifest_path)}: include[{i}]: {inc}: no such file'
            )
        includes.append(inc_path)
        layers.append(
            (inc_path, _mapping(_load_yaml(inc_path, 'include'), inc_path, ''))
        )
    # Spack: the environment's own settings win over its includes, and an
    # include listed earlier wins over one listed later.
    packages, concretizer, definitions = {}, {}, []
    for where, layer in [*reversed(layers), (manifest_path, manifest)]:
        for name, settings in _mapping(
            layer.get('packages'), where, 'packages'
        ).items():
            merged = dict(packages.get(name, {}))
            merged.update(_mapping(settings, where, f'packages:{name}'))
            packages[name] = merged
        concretizer.update(_mapping(layer.get('concretizer'), where, 'concretizer'))
    for where, layer in [*layers, (manifest_path, manifest)]:
        for entry in layer.get('definitions') or []:
            if not isinstance(entry, dict):
                raise SpackEnvError(
                    f'{relative(where)}: definitions: expected name: [specs] entries'
                )
            definitions.append((where, entry))
    specs = _expand_specs(manifest.get('specs') or [], definitions, manifest_path)
    return Environment(
        path=os.path.normpath(path),
        manifest=manifest,
        includes=includes,
        packages=packages,
        concretizer=concretizer,
        specs=specs,
    )


def _expand_specs(specs, definitions, manifest_path):
    named = collections.OrderedDict()
    for where, entry in definitions:
        for name, values in entry.items():
            if name == 'when':
                raise SpackEnvError(
                    f'{relative(where)}: definitions:{list(entry)[0]}: '
                    f'conditional definitions are not supported here'
                )
            named.setdefault(name, []).extend(_expand_list(values, named, where, name))
    return _expand_list(specs, named, manifest_path, 'specs')


def _reference(item, named, where, key):
    match = re.fullmatch(r'\$([\^%]?)(\w+)', item)
    if not match:
        return None
    prefix, name = match.groups()
    if name not in named:
        raise SpackEnvError(f'{relative(where)}: {key}: ${name} is not defined')
    return [prefix + spec for spec in named[name]]


def _expand_list(values, named, where, key):
    if not isinstance(values, list):
        raise SpackEnvError(f'{relative(where)}: {key}: expected a list')
    out = []
    for item in values:
        if isinstance(item, str):
            ref = _reference(item.strip(), named, where, key)
            out.extend(ref if ref is not None else [item.strip()])
        elif isinstance(item, dict) and 'matrix' in item:
            out.extend(_expand_matrix(item, named, where, key))
        else:
            raise SpackEnvError(f'{relative(where)}: {key}: unsupported entry {item!r}')
    return out


def _expand_matrix(item, named, where, key):
    rows = [[]]
    for axis in item['matrix']:
        choices = _expand_list(axis, named, where, f'{key}:matrix')
        rows = [row + [choice] for row in rows for choice in choices]
    excluded = set(_expand_list(item.get('exclude') or [], named, where, key))
    return [' '.join(row) for row in rows if ' '.join(row) not in excluded]


def canonical_spec(spec):
    """*spec* written the way Spack writes a root in a lock.

    ``stream +openmp n=1`` and ``stream n=1+openmp`` both become
    ``stream+openmp n=1``: per node the name and version, the boolean
    variants sorted by name, then the valued ones sorted; ``^`` dependencies
    follow in the order given. Enough for the specs environments list.
    """
    nodes = []
    for part in re.split(r'\s*\^', spec.strip()):
        head, flags, valued = '', [], []
        for token in part.split():
            for piece in re.findall(r'[+~][^+~\s]+|[^+~\s]+', token):
                if piece[0] in '+~':
                    flags.append(piece)
                elif '=' in piece and head:
                    valued.append(piece)
                else:
                    head += piece
        flags.sort(key=lambda f: f[1:])
        nodes.append(' '.join([head + ''.join(flags), *sorted(valued)]))
    return ' ^'.join(nodes)


def requirement_names(require):
    """The package names a ``require:`` allows (``one_of``/``any_of`` included)."""
    return [spec_name(spec) for spec in requirement_specs(require)]


def requirement_specs(require):
    if require is None:
        return []
    if isinstance(require, str):
        return [require]
    specs = []
    for item in require:
        if isinstance(item, str):
            specs.append(item)
        elif isinstance(item, dict):
            for key in ('one_of', 'any_of'):
                specs.extend(item.get(key) or [])
            if isinstance(item.get('spec'), str):
                specs.append(item['spec'])
    return specs


def spec_name(spec):
    match = re.match(r'\s*([A-Za-z][\w-]*)', spec)
    return match.group(1) if match else ''


def spec_version(spec):
    match = re.match(r'\s*[A-Za-z][\w-]*@=?([\w.-]+)', spec)
    return match.group(1) if match else None


def required_targets(require):
    return [
        m.group(1)
        for spec in requirement_specs(require)
        for m in [re.search(r'\btarget=(\S+)', spec)]
        if m
    ]


def find_environments(root=ENVS_ROOT):
    """Every environment directory under *root*, relative to it, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SHARED_DIRS and not d.startswith('.')
        )
        if MANIFEST in filenames:
            found.append(os.path.relpath(dirpath, root))
    return sorted(found)


def convention_problems(env):
    """Where *env* breaks the project's conventions: one line per problem."""
    where = relative(env.manifest_path)
    problems = []
    compilers = set()
    for lang in COMPILER_LANGUAGES:
        names = requirement_specs(env.packages.get(lang, {}).get('require'))
        if not names:
            problems.append(f'{where}: packages:{lang}:require: compiler not pinned')
        compilers.update(names)
    if len(compilers) > 1:
        problems.append(
            f'{where}: packages:c/cxx/fortran:require: one compiler for every '
            f'language, got {sorted(compilers)}'
        )
    mpis = env.mpi_providers()
    if not mpis:
        problems.append(f'{where}: packages:mpi:require: MPI provider not pinned')
    for name in mpis:
        if name not in MPI_PROVIDERS:
            problems.append(
                f'{where}: packages:mpi:require: {name!r} is not an MPI provider'
            )
    if len(mpis) > 1 and env.concretizer.get('unify') is not False:
        problems.append(
            f'{where}: concretizer:unify: must be false with {len(mpis)} MPI providers'
        )
    for virtual in ('blas', 'lapack'):
        names = requirement_names(env.packages.get(virtual, {}).get('require'))
        if len(names) != 1 or names[0] not in BLAS_PROVIDERS:
            problems.append(
                f'{where}: packages:{virtual}:require: pin one provider '
                f'(e.g. openblas), got {names or "none"}'
            )
    targets = required_targets(env.packages.get('all', {}).get('require'))
    if len(targets) != 1 or targets[0] not in PORTABLE_TARGETS:
        problems.append(
            f'{where}: packages:all:require: pin one portable target '
            f'({", ".join(PORTABLE_TARGETS)}), got {targets or "none"}'
        )
    if env.concretizer.get('reuse') is not False:
        problems.append(
            f'{where}: concretizer:reuse: must be false (a lock must not depend '
            f'on what happens to be installed)'
        )
    problems.extend(_root_problems(env, where, mpis))
    return problems


@functools.cache
def benchmarks():
    """``{spec: links MPI}`` of the benchmarks in :data:`BENCHMARKS_FILE`."""
    path = os.path.join(paths.get('spack_envs'), BENCHMARKS_FILE)
    found = {}
    definitions = _mapping(_load_yaml(path, 'include'), path, '').get('definitions')
    if not isinstance(definitions, list):
        definitions = []  # the check below names the file and the key
    for entry in definitions:
        entry = _mapping(entry, path, 'definitions')
        for name, uses_mpi in (('mpi_benchmarks', True), ('serial_benchmarks', False)):
            specs = entry.get(name) or []
            for spec in specs if isinstance(specs, list) else []:
                found[str(spec)] = uses_mpi
    if not found:
        raise SpackEnvError(
            f'{relative(path)}: definitions: no mpi_benchmarks or serial_benchmarks'
        )
    return found


def expected_roots(mpis):
    """The root specs an environment with MPI providers *mpis* must have."""
    roots = []
    for spec, uses_mpi in benchmarks().items():
        roots.extend([f'{spec} ^{mpi}' for mpi in mpis] if uses_mpi else [spec])
    return roots


def benchmark_root(spec):
    """*spec* as a benchmark of the checks: canonical, with the value of each
    TUNABLE_VARIANTS left out (``stream ... stream_array_size=*``)."""
    text = canonical_spec(spec)
    for variant in TUNABLE_VARIANTS:
        text = re.sub(rf'\b{variant}=\S+', f'{variant}=*', text)
    return text


def _root_problems(env, where, mpis):
    if not mpis:
        return []  # the missing MPI pin is the problem; roots cannot be judged
    have = collections.Counter(benchmark_root(s) for s in env.specs)
    want = collections.Counter(benchmark_root(s) for s in expected_roots(mpis))
    problems = [
        f'{where}: specs: {spec!r} listed {n} times'
        for spec, n in have.items()
        if n > 1
    ]
    problems += [
        f'{where}: specs: missing root {spec!r}' for spec in want if spec not in have
    ]
    problems += [
        f'{where}: specs: {spec!r} is not a benchmark of the checks'
        for spec in have
        if spec not in want
    ]
    return problems

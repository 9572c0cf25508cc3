"""The Spack environments of spack_envs/: parsing, conventions, locks.

Everything here works without Spack: a ``spack.yaml`` is read with its
includes (paths relative to the environment), its ``definitions`` and its
``specs`` (plain specs, ``$name`` references and matrices) are expanded the
way Spack expands them, and the committed ``spack.lock`` (JSON) is checked
against it. Problems are reported one per line, each naming the file and the
key at fault.

Layout: ``spack_envs/<system>/<partition>-<environ>/`` holds the environment
of one ReFrame programming environment of a partition;
``spack_envs/<system>/<partition>/`` one shared by all of a partition's
programming environments (several MPI flavours, ``unify: false``); files
shared between environments live in ``spack_envs/common/`` (or beside the
partitions of a system) and are included, never copied.
"""

import collections
import dataclasses
import hashlib
import json
import os
import re
import sys

import yaml

from clusterbench import stacknames
from clusterbench.core.errors import ClusterbenchError

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENVS_ROOT = os.path.join(PROJECT, 'spack_envs')
MANIFEST = 'spack.yaml'
LOCKFILE = 'spack.lock'
#: Directories of ENVS_ROOT that are not systems.
SHARED_DIRS = ('common',)
#: Systems kept as templates a centre copies: no site configuration uses them.
#: (example-site has one now: site_configs/example-site.py, checked with it.)
TEMPLATE_SYSTEMS = ()

#: The upstream benchmarks the checks build, as Spack root specs (without MPI):
#: spec -> whether it links MPI. Every environment has each MPI benchmark once
#: per MPI provider, and each other benchmark once.
BENCHMARKS = {
    'npb implementation=mpi': True,
    'hpl': True,
    'hpcg': True,
    'osu-micro-benchmarks': True,
    'intel-mpi-benchmarks': True,
    'stream+openmp stream_array_size=80000000': False,
}
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


def _relative(path):
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
            f'{_relative(path)}: cannot read {what}: {err.strerror}'
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, 'problem_mark', None)
        line = f':{mark.line + 1}' if mark else ''
        problem = getattr(err, 'problem', None) or err
        raise SpackEnvError(f'{_relative(path)}{line}: YAML error: {problem}') from None
    return {} if data is None else data


def _mapping(value, path, key):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpackEnvError(f'{_relative(path)}: {key}: expected a mapping')
    return value


def load(path):
    """Parse the environment in directory *path* (spack.yaml and its includes)."""
    manifest_path = os.path.join(path, MANIFEST)
    data = _load_yaml(manifest_path, MANIFEST)
    if not isinstance(data, dict) or not isinstance(data.get('spack'), dict):
        raise SpackEnvError(f'{_relative(manifest_path)}: spack: expected a mapping')
    manifest = data['spack']
    includes, layers = [], []
    for i, entry in enumerate(manifest.get('include') or []):
        inc = entry.get('path') if isinstance(entry, dict) else entry
        if not isinstance(inc, str):
            raise SpackEnvError(
                f'{_relative(manifest_path)}: include[{i}]: expected a path'
            )
        inc_path = os.path.normpath(os.path.join(path, os.path.expandvars(inc)))
        if not os.path.isfile(inc_path):
            raise SpackEnvError(
                f'{_relative(manifest_path)}: include[{i}]: {inc}: no such file'
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
                    f'{_relative(where)}: definitions: expected name: [specs] entries'
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
                    f'{_relative(where)}: definitions:{list(entry)[0]}: '
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
        raise SpackEnvError(f'{_relative(where)}: {key}: ${name} is not defined')
    return [prefix + spec for spec in named[name]]


def _expand_list(values, named, where, key):
    if not isinstance(values, list):
        raise SpackEnvError(f'{_relative(where)}: {key}: expected a list')
    out = []
    for item in values:
        if isinstance(item, str):
            ref = _reference(item.strip(), named, where, key)
            out.extend(ref if ref is not None else [item.strip()])
        elif isinstance(item, dict) and 'matrix' in item:
            out.extend(_expand_matrix(item, named, where, key))
        else:
            raise SpackEnvError(
                f'{_relative(where)}: {key}: unsupported entry {item!r}'
            )
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
    return [_spec_name(spec) for spec in requirement_specs(require)]


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


def _spec_name(spec):
    match = re.match(r'\s*([A-Za-z][\w-]*)', spec)
    return match.group(1) if match else ''


def _spec_version(spec):
    match = re.match(r'\s*[A-Za-z][\w-]*@=?([\w.-]+)', spec)
    return match.group(1) if match else None


def _targets(require):
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
    where = _relative(env.manifest_path)
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
    targets = _targets(env.packages.get('all', {}).get('require'))
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


def expected_roots(mpis):
    """The root specs an environment with MPI providers *mpis* must have."""
    roots = []
    for spec, uses_mpi in BENCHMARKS.items():
        roots.extend([f'{spec} ^{mpi}' for mpi in mpis] if uses_mpi else [spec])
    return roots


def _root_problems(env, where, mpis):
    if not mpis:
        return []  # the missing MPI pin is the problem; roots cannot be judged
    have = collections.Counter(canonical_spec(s) for s in env.specs)
    want = collections.Counter(canonical_spec(s) for s in expected_roots(mpis))
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


# -- locks ------------------------------------------------------------------


@dataclasses.dataclass
class Lock:
    path: str
    data: dict
    sha256: str

    @property
    def roots(self):
        return self.data['roots']

    def node(self, dag_hash):
        return self.data['concrete_specs'][dag_hash]

    def dependencies(self, node, virtual):
        """The nodes *node* depends on for the virtual *virtual* (``mpi``, ``c``)."""
        return [
            self.node(dep['hash'])
            for dep in node.get('dependencies', [])
            if virtual in dep.get('parameters', {}).get('virtuals', [])
        ]

    def walk(self, dag_hash):
        """Every node of the DAG under *dag_hash*, each once."""
        seen, stack, nodes = set(), [dag_hash], []
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            node = self.node(current)
            nodes.append(node)
            stack.extend(dep['hash'] for dep in node.get('dependencies', []))
        return nodes


def load_lock(path):
    """Read a spack.lock (directory or file) and check its structure."""
    if os.path.isdir(path):
        path = os.path.join(path, LOCKFILE)
    where = _relative(path)
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except OSError as err:
        raise SpackEnvError(f'{where}: cannot read: {err.strerror}') from None
    try:
        data = json.loads(raw)
    except ValueError as err:
        raise SpackEnvError(f'{where}: not JSON: {err}') from None
    meta = data.get('_meta', {}) if isinstance(data, dict) else {}
    if meta.get('file-type') != 'spack-lockfile':
        raise SpackEnvError(f'{where}: _meta:file-type: not a spack-lockfile')
    if not isinstance(data.get('roots'), list) or not isinstance(
        data.get('concrete_specs'), dict
    ):
        raise SpackEnvError(f'{where}: roots/concrete_specs: missing')
    for i, root in enumerate(data['roots']):
        if not isinstance(root, dict) or root.get('hash') not in data['concrete_specs']:
            raise SpackEnvError(f'{where}: roots[{i}]: hash not in concrete_specs')
        if not isinstance(root.get('spec'), str):
            raise SpackEnvError(f'{where}: roots[{i}]: spec: missing')
    for dag_hash, node in data['concrete_specs'].items():
        for dep in node.get('dependencies', []):
            if dep.get('hash') not in data['concrete_specs']:
                raise SpackEnvError(
                    f'{where}: concrete_specs:{dag_hash}: dependency '
                    f'{dep.get("name")} not in the lock'
                )
    return Lock(path=path, data=data, sha256=hashlib.sha256(raw).hexdigest())


def _satisfies_version(version, wanted):
    if wanted is None:
        return True
    got = str(version).split('.')
    want = wanted.split('.')
    return got[: len(want)] == want


def lock_problems(env, lock=None):
    """Where the lock of *env* disagrees with its spack.yaml: one line each."""
    try:
        lock = lock or load_lock(env.lock_path)
    except SpackEnvError as err:
        return [str(err)]
    where = _relative(lock.path)
    problems = []
    version = lock.data.get('spack', {}).get('version', '')
    if not str(version).startswith('1.'):
        problems.append(f'{where}: spack:version: {version!r}, Spack 1.x expected')
    have = collections.Counter(canonical_spec(root['spec']) for root in lock.roots)
    want = collections.Counter(canonical_spec(spec) for spec in env.specs)
    if have != want:
        missing = sorted((want - have).elements())
        extra = sorted((have - want).elements())
        problems.append(
            f'{where}: roots: differ from {MANIFEST} specs '
            f'(missing {missing}, not in {MANIFEST} {extra}): re-concretize'
        )
    compiler_pins = {
        lang: requirement_specs(env.packages.get(lang, {}).get('require'))
        for lang in COMPILER_LANGUAGES
    }
    blas_pins = {
        v: requirement_names(env.packages.get(v, {}).get('require'))
        for v in ('blas', 'lapack')
    }
    mpis = env.mpi_providers()
    targets = _targets(env.packages.get('all', {}).get('require'))
    for root in lock.roots:
        top = lock.node(root['hash'])
        key = f'{where}: roots:{root["spec"]!r}'
        if top['name'] != _spec_name(root['spec']):
            problems.append(f'{key}: concretized to {top["name"]}')
        wanted_mpi = re.search(r'\^(\S+)', root['spec'])
        for node in lock.walk(root['hash']):
            label = f'{node["name"]}@{node["version"]}'
            target = node.get('arch', {}).get('target')
            if isinstance(target, dict):
                target = target.get('name')
            if targets and target != targets[0]:
                problems.append(f'{key}: {label}: target={target}, {targets[0]} pinned')
            for mpi in lock.dependencies(node, 'mpi'):
                if mpis and mpi['name'] not in mpis:
                    problems.append(f'{key}: {label}: mpi={mpi["name"]}, pinned {mpis}')
                elif wanted_mpi and mpi['name'] != _spec_name(wanted_mpi.group(1)):
                    problems.append(
                        f'{key}: {label}: mpi={mpi["name"]}, the root asks for '
                        f'{wanted_mpi.group(1)}'
                    )
            for lang, pins in compiler_pins.items():
                for comp in lock.dependencies(node, lang):
                    if not any(
                        comp['name'] == _spec_name(pin)
                        and _satisfies_version(comp['version'], _spec_version(pin))
                        for pin in pins
                    ):
                        problems.append(
                            f'{key}: {label}: {lang} compiler '
                            f'{comp["name"]}@{comp["version"]}, pinned {pins}'
                        )
            for virtual, pins in blas_pins.items():
                for prov in lock.dependencies(node, virtual):
                    if prov['name'] not in pins:
                        problems.append(
                            f'{key}: {label}: {virtual}={prov["name"]}, pinned {pins}'
                        )
    return problems


def find_root(lock, package, mpi=None, compiler=None, blas=None):
    """The lock root that builds *package* with the given stack: (spec, hash).

    *package* is the Spack package name; *mpi*, *compiler* and *blas* are
    package names (``openmpi``, ``gcc``, ``openblas``) that the root's own
    dependencies must have where it has such a dependency.
    """
    found = []
    for root in lock.roots:
        node = lock.node(root['hash'])
        if node['name'] != package:
            continue
        wanted = {
            'mpi': mpi,
            'blas': blas,
            'c': compiler,
            'cxx': compiler,
            'fortran': compiler,
        }
        if all(
            want is None or all(d['name'] == want for d in lock.dependencies(node, v))
            for v, want in wanted.items()
        ):
            found.append((root['spec'], root['hash']))
    stack = ', '.join(
        f'{k}={v}'
        for k, v in (('mpi', mpi), ('compiler', compiler), ('blas', blas))
        if v
    )
    if not found:
        raise SpackEnvError(
            f'{_relative(lock.path)}: roots: none builds {package}'
            + (f' with {stack}' if stack else '')
        )
    if len(found) > 1:
        raise SpackEnvError(
            f'{_relative(lock.path)}: roots: {len(found)} build {package}'
            + (f' with {stack}' if stack else '')
            + ': make the specs distinct'
        )
    return found[0]


# -- which environment a partition uses ---------------------------------------


def environment_for(
    system, partition, environ, extras=None, root=ENVS_ROOT, project=PROJECT
):
    """The environment directory of a partition's programming environment.

    A partition's ``extras['spack_env']`` names it explicitly: a path (relative
    to the project) shared by all its programming environments, or a mapping
    from programming environment to path. Otherwise the naming convention
    applies: ``<root>/<system>/<partition>-<environ>`` if it exists, else
    ``<root>/<system>/<partition>``. Returns None if there is none.
    """
    declared = (extras or {}).get('spack_env')
    if isinstance(declared, dict):
        declared = declared.get(environ)
    if declared:
        path = os.path.normpath(os.path.join(project, declared))
        return path if os.path.isfile(os.path.join(path, MANIFEST)) else None
    for name in (f'{partition}-{environ}', partition):
        path = os.path.join(root, system, name)
        if os.path.isfile(os.path.join(path, MANIFEST)):
            return os.path.normpath(path)
    return None


def site_config_problems(configs, root=ENVS_ROOT, project=PROJECT):
    """Cross-check site configurations against the environments under *root*.

    *configs* maps a site configuration's file name to its
    ``site_configuration``. Every programming environment of every partition
    must have an environment, and every environment of a configured system
    must be used by one. Systems no configuration defines (templates, or a
    system whose configuration is not written yet) are returned apart.
    """
    problems, used = [], set()
    systems = {s['name'] for c in configs.values() for s in c.get('systems', [])}
    for source, _, system, part, environ, path in _configured(configs, root, project):
        if path is None:
            problems.append(
                f'{source}: systems:{system}:partitions:{part}:environs:{environ}: '
                f'no Spack environment (expected '
                f'{_relative(os.path.join(root, system))}'
                f'/{part}-{environ}/{MANIFEST})'
            )
        else:
            used.add(os.path.relpath(path, root))
    unconfigured = set()
    for env in find_environments(root):
        system = env.split(os.sep)[0]
        if system not in systems:
            unconfigured.add(system)
        elif env not in used:
            problems.append(
                f'{_relative(os.path.join(root, env, MANIFEST))}: no partition of '
                f'system {system!r} uses this environment'
            )
    return problems, sorted(unconfigured)


def _environment_definition(config, name, system):
    for env in config.get('environments', []):
        targets = env.get('target_systems', ['*'])
        if env.get('name') == name and ('*' in targets or system in targets):
            return env
    return None


def _pinned_version(env, package):
    """The version *package* is pinned to (``require: ['@5.0.8 ...']`` or
    ``gcc@13.3.0`` in a compiler pin), or None."""
    for spec in requirement_specs(env.packages.get(package, {}).get('require')):
        match = re.match(r'\s*(?:[A-Za-z][\w-]*)?@=?([\w.]+)', spec)
        if match:
            return match.group(1)
    for lang in COMPILER_LANGUAGES:
        for spec in requirement_specs(env.packages.get(lang, {}).get('require')):
            if _spec_name(spec) == package and _spec_version(spec):
                return _spec_version(spec)
    return None


def stack_problems(configs, root=ENVS_ROOT, project=PROJECT):
    """Where a programming environment and its partition's Spack environment
    disagree: the environment's ``extras`` (mpi, compiler, blas) must be what
    the Spack environment pins, and a module it loads named after one of
    them (``openmpi/5.0.8``) must have the pinned version."""
    problems = []
    for source, config, system, _, environ, path in _configured(configs, root, project):
        definition = _environment_definition(config, environ, system)
        if path is None or definition is None:
            continue  # site_config_problems / ReFrame say so
        try:
            env = load(path)
        except SpackEnvError:
            continue  # check_tree reports it
        problems += _stack_mismatches(
            env, definition, f'{source}: environments:{environ}'
        )
    return sorted(set(problems))


def _configured(configs, root, project):
    """(source, config, system, partition, environ, Spack environment or None)
    of every programming environment of every partition of *configs*."""
    for source, config in configs.items():
        for system in config.get('systems', []):
            for part in system.get('partitions', []):
                for environ in part.get('environs', []):
                    path = environment_for(
                        system['name'],
                        part['name'],
                        environ,
                        part.get('extras'),
                        root,
                        project,
                    )
                    yield source, config, system['name'], part['name'], environ, path


def _stack_mismatches(env, definition, where):
    manifest = _relative(env.manifest_path)
    extras = definition.get('extras', {})
    pins = {
        'mpi': env.mpi_providers(),
        'compiler': sorted(
            {
                name
                for lang in COMPILER_LANGUAGES
                for name in requirement_names(env.packages.get(lang, {}).get('require'))
            }
        ),
        'blas': requirement_names(env.packages.get('blas', {}).get('require')),
    }
    problems = []
    for key, allowed in pins.items():
        value = extras.get(key)
        if value is None:
            problems.append(
                f'{where}:extras:{key}: missing ({manifest} pins {allowed})'
            )
        elif value not in allowed:
            problems.append(
                f'{where}:extras:{key}: {value!r}, but {manifest} pins {allowed}'
            )
    stack = {extras.get(k) for k in pins} - {None}
    for module in definition.get('modules', []):
        name = module.get('name') if isinstance(module, dict) else module
        package, _, version = str(name).partition('/')
        if package not in stack or not version:
            continue
        pinned = _pinned_version(env, package)
        if pinned and version.split('-')[0] != pinned:
            problems.append(
                f'{where}:modules: {name} is not {package}@{pinned} '
                f'that {manifest} pins'
            )
    return problems


def load_site_configs(directory):
    """``site_configuration`` of every ``*.py`` of *directory* but common.py,
    by file name (``site_configs/local.py``); a file that cannot be loaded
    raises SpackEnvError naming it."""
    import runpy

    configs = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith('.py') or name == 'common.py':
            continue
        path = os.path.join(directory, name)
        try:
            config = runpy.run_path(path).get('site_configuration')
        except Exception as err:  # noqa: BLE001 - a site file can raise anything
            raise SpackEnvError(f'{_relative(path)}: cannot load: {err}') from None
        if config:
            configs[_relative(path)] = config
    return configs


def check_tree(root=ENVS_ROOT):
    """Every convention and lock problem of every environment under *root*."""
    problems = []
    for name in find_environments(root):
        try:
            env = load(os.path.join(root, name))
        except SpackEnvError as err:
            problems.append(str(err))
            continue
        problems.extend(convention_problems(env))
        problems.extend(lock_problems(env))
    return problems


def main(argv=None):
    """``python -m clusterbench.spackenv [DIR]``: print problems, exit 1 if any."""
    args = sys.argv[1:] if argv is None else argv
    root = os.path.abspath(args[0]) if args else ENVS_ROOT
    problems = check_tree(root)
    for problem in problems:
        print(problem, file=sys.stderr)
    names = find_environments(root)
    if not problems:
        print(f'{len(names)} Spack environments and their locks follow the conventions')
    # The site configs beside the environments (a checkout's, or the wheel's).
    configs_dir = os.path.join(os.path.dirname(root), 'site_configs')
    config_problems = []
    if os.path.isdir(configs_dir):
        try:
            configs = load_site_configs(configs_dir)
        except SpackEnvError as err:
            config_problems = [str(err)]
        else:
            project = os.path.dirname(root)
            config_problems, _ = site_config_problems(configs, root, project)
            config_problems += stack_problems(configs, root, project)
        for problem in config_problems:
            print(problem, file=sys.stderr)
        if not config_problems:
            print(
                f'{len(configs)} site configs and their Spack environments agree '
                f'(MPI, compiler, BLAS, module versions)'
            )
    return 1 if problems or config_problems or not names else 0


if __name__ == '__main__':
    raise SystemExit(main())

"""The committed ``spack.lock`` (JSON) of an environment, checked against its
``spack.yaml``: every root concretized, pinned where the manifest pins it,
for a portable target; and which concrete spec a check builds with.
"""

import collections
import dataclasses
import hashlib
import json
import os
import re

from clusterbench.site.spackmanifest import (
    COMPILER_LANGUAGES,
    LOCKFILE,
    MANIFEST,
    SpackEnvError,
    canonical_spec,
    relative,
    required_targets,
    requirement_names,
    requirement_specs,
    spec_name,
    spec_version,
)


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
    where = relative(path)
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
    where = relative(lock.path)
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
    targets = required_targets(env.packages.get('all', {}).get('require'))
    stale = set()
    for root in lock.roots:
        top = lock.node(root['hash'])
        key = f'{where}: roots:{root["spec"]!r}'
        if top['name'] != spec_name(root['spec']):
            problems.append(f'{key}: concretized to {top["name"]}')
        wanted_mpi = re.search(r'\^(\S+)', root['spec'])
        for node in lock.walk(root['hash']):
            label = f'{node["name"]}@{node["version"]}'
            wanted = version_pins(env, node['name'])
            if wanted and not any(
                _satisfies_version(node['version'], v) for v in wanted
            ):
                stale.add(
                    f'{where}: {label}: {MANIFEST} and its includes now ask for '
                    f'{node["name"]}@{" or @".join(wanted)}: the lock is stale, '
                    f're-concretize'
                )
            target = node.get('arch', {}).get('target')
            if isinstance(target, dict):
                target = target.get('name')
            if targets and target != targets[0]:
                problems.append(f'{key}: {label}: target={target}, {targets[0]} pinned')
            for mpi in lock.dependencies(node, 'mpi'):
                if mpis and mpi['name'] not in mpis:
                    problems.append(f'{key}: {label}: mpi={mpi["name"]}, pinned {mpis}')
                elif wanted_mpi and mpi['name'] != spec_name(wanted_mpi.group(1)):
                    problems.append(
                        f'{key}: {label}: mpi={mpi["name"]}, the root asks for '
                        f'{wanted_mpi.group(1)}'
                    )
            for lang, pins in compiler_pins.items():
                for comp in lock.dependencies(node, lang):
                    if not any(
                        comp['name'] == spec_name(pin)
                        and _satisfies_version(comp['version'], spec_version(pin))
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
    return problems + sorted(stale)


def version_pins(env, package):
    """The versions *env* allows *package* (its own ``require`` pins, or the
    externals it must use when it is not buildable); empty: any."""
    settings = env.packages.get(package, {})
    pins = [
        version
        for spec in requirement_specs(settings.get('require'))
        for version in [spec_version(spec if spec_name(spec) else f'x{spec}')]
        if version
    ]
    if settings.get('buildable') is False:
        pins += [
            version
            for entry in settings.get('externals') or []
            if isinstance(entry, dict)
            for version in [spec_version(str(entry.get('spec', '')))]
            if version
        ]
    return pins


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
            f'{relative(lock.path)}: roots: none builds {package}'
            + (f' with {stack}' if stack else '')
        )
    if len(found) > 1:
        raise SpackEnvError(
            f'{relative(lock.path)}: roots: {len(found)} build {package}'
            + (f' with {stack}' if stack else '')
            + ': make the specs distinct'
        )
    return found[0]

"""Which Spack environment a partition's programming environment uses, and
whether the site configurations agree with the environments: the same MPI,
compiler and BLAS, and the module versions the environments pin.
"""

import os
import re

from clusterbench.site.contract import PartitionSpec
from clusterbench.site.spackmanifest import (
    COMPILER_LANGUAGES,
    ENVS_ROOT,
    MANIFEST,
    PROJECT,
    SpackEnvError,
    find_environments,
    load,
    relative,
    requirement_names,
    requirement_specs,
    spec_name,
    spec_version,
)


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
        if path is None and system in without_spack(configs, root):
            continue  # its software comes from modules or the system
        if path is None:
            problems.append(
                f'{source}: systems:{system}:partitions:{part}:environs:{environ}: '
                f'no Spack environment (expected '
                f'{relative(os.path.join(root, system))}/{part}/{MANIFEST}, '
                f'or {part}-{environ}/{MANIFEST} for {environ} alone)'
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
                f'{relative(os.path.join(root, env, MANIFEST))}: no partition of '
                f'system {system!r} uses this environment'
            )
    return problems, sorted(unconfigured)


def without_spack(configs, root=ENVS_ROOT):
    """The systems of *configs* with no directory under *root* at all: they
    use no Spack environment (modules, or the system's own packages), which
    is no error; a system with the directory must have every environment."""
    return sorted(
        {
            s['name']
            for c in configs.values()
            for s in c.get('systems', [])
            if not os.path.isdir(os.path.join(root, s['name']))
        }
    )


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
            if spec_name(spec) == package and spec_version(spec):
                return spec_version(spec)
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
                        PartitionSpec.of(part, source).extras,
                        root,
                        project,
                    )
                    yield source, config, system['name'], part['name'], environ, path


def _stack_mismatches(env, definition, where):
    manifest = relative(env.manifest_path)
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
            raise SpackEnvError(f'{relative(path)}: cannot load: {err}') from None
        if config:
            configs[relative(path)] = config
    return configs

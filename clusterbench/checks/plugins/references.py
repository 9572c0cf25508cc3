"""External references (ReFrame 4.10 ``$ref``), one directory per system:
the project's reference_data/<system>/.

What a judged check (:class:`~clusterbench.checks.plugins.judged.JudgedCheck`)
does with them: ``reference_index`` is the ``$index`` that ``clusterbench
references update`` writes for the test, and the processor facts are kept in
the run report so that update can use them.
"""

import os
import re

import reframe.core.runtime as rt
from reframe.core.exceptions import ReferenceParseError

from clusterbench.core.errors import ClusterbenchError
from clusterbench.machine import hwinfo
from clusterbench.references import lookup as reflookup
from clusterbench.references import provenance as refprov
from clusterbench.references import store as refstore
from clusterbench.references import validate as refdata
from clusterbench.site import contract

# reframe_checks/ and reference_data/ are siblings in a clusterbench tree.
_PROJECT_REFERENCES = os.path.join('..', 'reference_data')

#: How references are indexed unless a check adds its own parameters: by
#: partition and environment, by the processor facts, and by the CPU kind
#: (vendor-family-model, ``cpu_kind``): two CPU generations that share a model
#: string (``AMD EPYC`` in a VM) differ there, so the embedded default
#: ``local`` gets *no reference* on a machine of another kind.
BASE_INDEX = (
    '$partition',
    '$environ',
    '$processor.arch',
    '$processor.model',
    'cpu_kind',
    '$processor.num_cpus',
)

#: What ``cpu_kind`` is where the partition declares none and its jobs do
#: not run here: it matches no reference.
UNKNOWN_KIND = 'unknown'


def use_external_references(check):
    """Point *check* at its YAML file (after init), never inline references.

    The file is looked up in the current system's directory of the reference
    root: ``RFM_REFERENCE_PREFIX`` when that is set (a site keeping its
    references elsewhere), otherwise ``reference_data/`` beside the directory
    of the concrete check (``reference_data/local/hpcc.yaml``). A system with
    no directory or file gets *no reference* on every figure.
    """
    # One directory per system: the references of the system ReFrame runs on
    # (one per session) are in <root>/<system>/.
    runtime = rt.runtime()
    path = os.path.join(runtime.system.name, check.reference_file)
    prefix = runtime.get_option('general/0/reference_prefix')
    if not prefix:
        prefix = check.prefix
        path = os.path.join(_PROJECT_REFERENCES, path)
    # ReFrame drops a test whose reference file is missing; a missing file
    # must instead show as "no reference" on every figure.
    full = os.path.join(prefix, path)
    if not os.path.isfile(full):
        return
    # ReFrame also drops the test (a warning, exit 0) when the file is
    # malformed: validate it here and fail the test in setup instead.
    check.reference_error = _problem(full)
    if check.reference_error:
        return
    try:
        check.reference = {'$ref': path}
    except Exception as err:  # noqa: BLE001 - anything ReFrame rejects
        check.reference_error = f'{_shown(full)}: {err}'
    check.reference_path = os.path.abspath(full)


def refuse_a_broken_reference_file(check):
    if check.reference_error:
        # A ReFrame error: the reason is shown as one line, no traceback.
        raise ReferenceParseError(check.reference_error)


def record_processor_facts(check):
    """The partition's processor facts, environment extras and CPU kind
    (after setup; kept in the run report for ``references update``)."""
    proc = check.current_partition.processor
    check.processor_facts = {
        'arch': proc.arch,
        'model': proc.model,
        'num_cpus': proc.num_cpus,
        'num_cpus_per_core': proc.num_cpus_per_core,
        'num_sockets': proc.num_sockets,
    }
    check.environ_extras = dict(check.current_environ.extras)
    kind = contract.PartitionSpec.of(check.current_partition).cpu_kind
    if not kind and contract.runs_here(check.current_partition):
        kind = hwinfo.cpu_kind_of_file()
    check.cpu_kind = str(kind or UNKNOWN_KIND)
    check.processor_facts['cpu_kind'] = check.cpu_kind


def host_probe_of_references(check):
    """The host probe's figures in the sessions *check*'s reference entry was
    made from, or {} (no reference, or none recorded)."""
    if not check.reference_path or not hasattr(check.reference, 'data'):
        return {}
    # The entry ReFrame judges this test against, found as ReFrame finds it.
    try:
        key = reflookup.matched_key(check.reference.index, check.reference.data, check)
    except re.error:
        return {}  # ReFrame fails the test on it
    if key is None:
        return {}
    folder, name = os.path.split(check.reference_path)
    prov = _provenance(os.path.join(folder, refprov.PROVENANCE_DIR, name))
    entries = prov.get(check.display_name.split()[0])
    where = refprov.where(key)
    entry = refprov.current(entries.get(where) if isinstance(entries, dict) else None)
    probe = entry.get('host_probe') if isinstance(entry, dict) else None
    return probe if isinstance(probe, dict) else {}


#: Parsed provenance files per file state (path, mtime, size).
_PROVENANCE = {}


def _provenance(path):
    """The records of a provenance file ({} when it is missing or broken:
    ``references check`` names that)."""
    try:
        info = os.stat(path)
    except OSError:
        return {}
    key = (path, info.st_mtime_ns, info.st_size)
    if key not in _PROVENANCE:
        try:
            data = refprov.load(path)
        except refdata.ReferenceFileError:
            data = {}
        _PROVENANCE[key] = refprov.records(data if isinstance(data, dict) else {})
    return _PROVENANCE[key]


#: Validation results per file state (path, mtime, size): one check per file,
#: not one per test.
_PROBLEMS = {}


def _shown(path):
    """*path* relative to the working directory when it lies under it."""
    path = os.path.abspath(path)
    here = os.getcwd()
    return os.path.relpath(path, here) if path.startswith(here + os.sep) else path


def _problem(path):
    """One line saying what is wrong with the reference file, or ''."""
    try:
        # Not cached: the state of the whole directory, not of this file.
        refstore.refuse_half_applied(_shown(os.path.dirname(os.path.abspath(path))))
    except ClusterbenchError as err:
        return str(err)
    try:
        info = os.stat(path)
    except OSError as err:
        return f'{_shown(path)}: cannot read: {err.strerror}'
    key = (os.path.abspath(path), info.st_mtime_ns, info.st_size)
    if key not in _PROBLEMS:
        try:
            refdata.check_file(_shown(path))
            _PROBLEMS[key] = ''
        except refdata.ReferenceFileError as err:
            _PROBLEMS[key] = str(err)
        except Exception as err:  # noqa: BLE001 - the test must fail, not vanish
            _PROBLEMS[key] = f'{_shown(path)}: cannot be read: {err}'
    return _PROBLEMS[key]

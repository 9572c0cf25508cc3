"""The digest of a node's facts for run reports and the session report: the
one small dict that identifies a node's kind (:func:`summary`), the identity
that tells two machines apart (:func:`identity`), and their text lines.
"""

from clusterbench.machine.factreader import ABSENT


def summary(facts):
    """The facts that identify a node's kind, in one small dict."""
    cpu, freq, mem = (
        facts.get('cpu', {}),
        facts.get('frequency', {}),
        facts.get('memory', {}),
    )
    topo = ABSENT
    if all(isinstance(cpu.get(k), int) for k in ('sockets', 'cores_per_socket')):
        topo = (
            f'{cpu["sockets"]} socket(s) x {cpu["cores_per_socket"]} cores x '
            f'{cpu.get("threads_per_core")} thread(s)'
        )
    total = mem.get('total_bytes')
    numa = facts.get('numa')
    software = facts.get('software', {})
    mpi = software.get('mpi', {})
    out = {
        'host': facts.get('host', ABSENT),
        'cpu': cpu.get('model', ABSENT),
        'topology': topo,
        'threads': cpu.get('threads', ABSENT),
        'max_mhz': freq.get('max_mhz', ABSENT),
        'memory_gib': round(total / 2**30, 1) if isinstance(total, int) else ABSENT,
        'numa_nodes': len(numa) if isinstance(numa, list) else ABSENT,
        'kernel': facts.get('kernel', {}).get('release', ABSENT),
        'network': [
            f'{n["name"]} {n["kind"]} {n["state"]} '
            + (
                f'{n["speed_mbps"]} Mb/s'
                if isinstance(n['speed_mbps'], int)
                else 'speed absent'
            )
            for n in facts.get('network') or []
            if isinstance(n, dict)
        ],
        'infiniband': _ib_digest(facts.get('infiniband')),
        'mpi': next(
            (
                v
                for v in (mpi.get('mpirun'), mpi.get('open_mpi'), mpi.get('mpich'))
                if v and v != ABSENT
            ),
            ABSENT,
        ),
        'ucx': software.get('ucx', ABSENT),
        'libfabric': software.get('libfabric', ABSENT),
        'compiler': (software.get('compilers') or {}).get('gcc', ABSENT),
        'blas': (software.get('blas') or {}).get('openblas', ABSENT),
        'openblas_core': (software.get('blas') or {}).get('openblas_core', ABSENT),
        'openblas_coretype': (software.get('blas') or {}).get('openblas_coretype'),
        'identity': identity(facts),
    }
    transport = software.get('mpi_transport')
    if transport and isinstance(transport, dict):
        # Only where a job set one: the digests of other jobs stay as they were.
        out['mpi_transport'] = dict(transport)
    return out


#: Where each identity fact comes from in the full facts, and its reason key.
_IDENTITY = {
    'cpu_kind': ('cpu', 'kind'),
    'vendor': ('cpu', 'vendor'),
    'family': ('cpu', 'family'),
    'model': ('cpu', 'model_number'),
    'model_name': ('cpu', 'model'),
    'stepping': ('cpu', 'stepping'),
    'microcode': ('cpu', 'microcode'),
    'microarchitecture': ('cpu', 'microarchitecture'),
    'l2_bytes': ('cpu', 'cache', 'l2_bytes'),
    'l3_bytes': ('cpu', 'cache', 'l3_bytes'),
    'smt': ('cpu', 'smt'),
    'base_mhz': ('frequency', 'base_mhz'),
    'max_mhz': ('frequency', 'max_mhz'),
    'governor': ('frequency', 'governor'),
    'memory_bytes': ('memory', 'total_bytes'),
    'dimm_speed_mts': ('platform', 'dimm_speed_mts'),
    'hypervisor': ('platform', 'hypervisor'),
    'kernel': ('kernel', 'release'),
    'bios_version': ('platform', 'bios_version'),
    'bios_date': ('platform', 'bios_date'),
}


def identity(facts):
    """What makes a node the kind of machine it is, for provenance and for
    telling two machines apart: CPU generation down to stepping and microcode,
    caches, clocks, memory, NUMA, hypervisor, kernel, firmware and HCAs. An
    absent fact is ``'absent'`` and ``absent`` says why."""
    out, reasons = {}, {}
    why = facts.get('absent') or {}
    for key, path in _IDENTITY.items():
        value = facts
        for part in path:
            value = value.get(part, ABSENT) if isinstance(value, dict) else ABSENT
        out[key] = value
        if value == ABSENT:
            reasons[key] = why.get('.'.join(path), 'not collected')
    numa = facts.get('numa')
    if isinstance(numa, list):
        out['numa'] = [n.get('cpus', ABSENT) for n in numa if isinstance(n, dict)]
    else:
        out['numa'] = ABSENT
        reasons['numa'] = why.get('numa', 'not collected')
    hcas = facts.get('infiniband')
    if isinstance(hcas, list):
        out['hcas'] = [_hca_identity(h) for h in hcas if isinstance(h, dict)]
    else:
        out['hcas'] = ABSENT
        reasons['hcas'] = why.get('infiniband', 'not collected')
    out['absent'] = reasons
    return out


def _hca_identity(hca):
    pcie = hca.get('pcie') if isinstance(hca.get('pcie'), dict) else {}
    return {
        'name': hca.get('name', ABSENT),
        'model': hca.get('hca_type', ABSENT),
        'board_id': hca.get('board_id', ABSENT),
        'firmware': hca.get('fw_ver', ABSENT),
        'ports': [
            {
                'port': p.get('port'),
                'state': p.get('state', ABSENT),
                'rate_gbps': p.get('rate_gbps', ABSENT),
                'width': p.get('width', ABSENT),
            }
            for p in hca.get('ports') or []
            if isinstance(p, dict)
        ],
        'pcie_speed': pcie.get('current_link_speed', ABSENT),
        'pcie_width': pcie.get('current_link_width', ABSENT),
    }


def _ib_digest(hcas):
    if not isinstance(hcas, list):
        return ABSENT
    out = []
    for hca in hcas:
        ports = ', '.join(
            f'port {p["port"]} {p["state"]}'
            + (f' {p["rate"]}' if p['state'] == 'ACTIVE' else '')
            for p in hca.get('ports', [])
        )
        out.append(
            f'{hca["name"]} {hca.get("hca_type")} fw {hca.get("fw_ver")}: {ports}'
        )
    return out


def format_summary(digest, indent='  ', software=True):
    """Text lines of a :func:`summary` (missing keys show as absent)."""

    def get(key):
        return digest.get(key, ABSENT)

    ib = get('infiniband')
    lines = [
        f'{indent}{get("host")}: {get("cpu")}, {get("topology")}, max MHz '
        f'{get("max_mhz")}, {get("memory_gib")} GiB in {get("numa_nodes")} NUMA '
        f'node(s), kernel {get("kernel")}',
        f'{indent}  network: {"; ".join(digest.get("network") or []) or "none"}',
        f'{indent}  infiniband: ' + ('; '.join(ib) if isinstance(ib, list) else ib),
    ]
    ident = digest.get('identity')
    if isinstance(ident, dict):
        lines.insert(1, f'{indent}  identity: {format_identity(ident)}')
    if software:
        lines.append(f'{indent}  {format_software(digest)}')
    return lines


def format_identity(ident):
    """One line: 'AMD-25-17 stepping 1 microcode 0x1000065, ...'."""
    get = ident.get
    return (
        f'{get("cpu_kind", ABSENT)} stepping {get("stepping", ABSENT)} microcode '
        f'{get("microcode", ABSENT)} ({get("microarchitecture", ABSENT)}), '
        f'L2 {get("l2_bytes", ABSENT)} B, L3 {get("l3_bytes", ABSENT)} B, '
        f'hypervisor {get("hypervisor", ABSENT)}, BIOS {get("bios_version", ABSENT)}'
    )


def format_software(digest):
    get = digest.get
    return (
        f'MPI {get("mpi", ABSENT)}; UCX {get("ucx", ABSENT)}; libfabric '
        f'{get("libfabric", ABSENT)}; {get("compiler", ABSENT)}; OpenBLAS '
        f'{get("blas", ABSENT)}{_blas_core(digest)}'
    )


def _blas_core(digest):
    core = digest.get('openblas_core')
    if not core or core == ABSENT:
        return ''
    forced = digest.get('openblas_coretype')
    return f' (core {core}' + (f', OPENBLAS_CORETYPE={forced})' if forced else ')')

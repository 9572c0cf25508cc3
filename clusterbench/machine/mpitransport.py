"""The MPI transport a job's environment chose, and whether it sends the
messages of ranks on one node through the network stack.

Open MPI, UCX, libfabric and MPICH read their transport from environment
variables (``OMPI_MCA_btl=tcp,self`` forces TCP, also between ranks of one
node). The node facts record the ones set in the job (:func:`chosen`), and a
portable figure of communication that fails names the cause
(:func:`cause`): a shared-memory PingPong at a tenth of a copy is a
transport, not a machine.
"""

#: The variables that choose a transport (Open MPI, UCX, libfabric, MPICH,
#: Intel MPI).
VARIABLES = (
    'OMPI_MCA_btl',
    'OMPI_MCA_pml',
    'OMPI_MCA_mtl',
    'UCX_TLS',
    'FI_PROVIDER',
    'MPIR_CVAR_NOLOCAL',
    'MPIR_CVAR_CH3_NOLOCAL',
    'I_MPI_FABRICS',
)
#: Open MPI's shared-memory components (``vader`` was renamed ``sm`` in 5.0).
_OMPI_SHARED = {'vader', 'sm', 'smcuda'}
#: UCX's transports within a node.
_UCX_SHARED = {'sm', 'shm', 'posix', 'sysv', 'cma', 'knem', 'xpmem', 'all'}


def chosen(environ):
    """{variable: value} of the transport variables set in *environ*."""
    return {name: environ[name] for name in VARIABLES if environ.get(name)}


def _words(value):
    return [w.strip().lower() for w in str(value).replace(';', ',').split(',')]


def _through_tcp(name, value):
    words = _words(value)
    if name == 'OMPI_MCA_btl':
        if words and words[0].startswith('^'):
            excluded = {words[0][1:], *words[1:]}
            return bool(_OMPI_SHARED & excluded) and 'tcp' not in excluded
        return 'tcp' in words and not _OMPI_SHARED & set(words)
    if name == 'UCX_TLS':
        return 'tcp' in words and not _UCX_SHARED & set(words)
    if name == 'FI_PROVIDER':
        return any(w in ('tcp', 'sockets') or w.startswith('tcp') for w in words)
    if name in ('MPIR_CVAR_NOLOCAL', 'MPIR_CVAR_CH3_NOLOCAL'):
        return words[0] in ('1', 'yes', 'true')
    return False


def cause(variables):
    """Why a job's ranks on one node talked through the network stack, from
    its transport *variables* ({name: value}), or ''."""
    found = [
        f'{name}={value}'
        for name, value in sorted((variables or {}).items())
        if isinstance(value, str) and _through_tcp(name, value)
    ]
    if not found:
        return ''
    return f'MPI through TCP, not shared memory ({", ".join(found)})'

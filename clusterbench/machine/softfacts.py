"""Software facts of a node: the MPI, UCX, libfabric, compiler and BLAS
versions, from their commands and from the libraries themselves.
"""

import json
import os
import re
import subprocess
import sys

from clusterbench.machine import libprobe, mpitransport
from clusterbench.machine.factreader import ABSENT, FactReader, first_line


def probe_libraries():
    """What :mod:`clusterbench.machine.libprobe` finds, or {} if it fails.

    The probe runs as a script by its file path in a child interpreter: a
    library that misbehaves on load cannot take the collector down, nothing
    stays loaded in the caller, and the child needs only the standard library
    (not clusterbench on its path).
    """
    env = {
        **{k: v for k, v in os.environ.items() if k != 'LD_PRELOAD'},
        'OPENBLAS_NUM_THREADS': '1',
    }
    try:
        proc = subprocess.run(
            [sys.executable, libprobe.__file__],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        return json.loads(proc.stdout) if proc.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {}


class SoftwareFacts(FactReader):
    """The ``software`` section."""

    def software(self):
        libs = self.probe() if self.probe else {}
        mpi = {
            'mpirun': self.command(
                'software.mpi.mpirun', ['mpirun', '--version'], _mpirun_version
            ),
            'open_mpi': self.command(
                'software.mpi.open_mpi', ['ompi_info', '--version']
            ),
            'mpich': self.command(
                'software.mpi.mpich', ['mpichversion'], _mpich_version
            ),
        }
        ucx = self.command('software.ucx', ['ucx_info', '-v'], _ucx_version)
        if ucx == ABSENT and 'ucx' in libs:
            self.absent.pop('software.ucx')
            ucx = f'{libs["ucx"]["version"]} (library)'
        fabric = self.command(
            'software.libfabric', ['fi_info', '--version'], _libfabric_version
        )
        if fabric == ABSENT and 'libfabric' in libs:
            self.absent.pop('software.libfabric')
            fabric = f'{libs["libfabric"]["version"]} (library API)'
        compilers = {
            cc: self.command(f'software.compilers.{cc}', [cc, '--version'])
            for cc in self.compilers
        }
        cc = os.environ.get('CC')
        if cc and cc not in compilers:
            compilers[cc] = self.command(f'software.compilers.{cc}', [cc, '--version'])
        return {
            'mpi': mpi,
            # The transport the job's environment forces (OMPI_MCA_btl, ...).
            'mpi_transport': mpitransport.chosen(os.environ),
            'ucx': ucx,
            'libfabric': fabric,
            'compilers': compilers,
            'blas': self._blas(libs),
        }

    def _blas(self, libs):
        out = {}
        if 'openblas' in libs:
            config = libs['openblas'].get('config', '')
            version = re.search(r'OpenBLAS\s+(\S+)', config)
            out['openblas'] = version.group(1) if version else config
            out['openblas_config'] = config
            if libs['openblas'].get('core'):
                out['openblas_core'] = libs['openblas']['core']
            # The core chosen by the environment, not by OpenBLAS (see blascore).
            if os.environ.get('OPENBLAS_CORETYPE'):
                out['openblas_coretype'] = os.environ['OPENBLAS_CORETYPE']
        else:
            out['openblas'] = self.missing(
                'software.blas.openblas', 'libopenblas not found'
            )
        if 'blas' in libs and libs['blas'].get('path'):
            out['libblas'] = libs['blas']['path']
        else:
            out['libblas'] = self.missing('software.blas.libblas', 'libblas not found')
        out['mkl'] = (libs.get('mkl') or {}).get('path') or self.missing(
            'software.blas.mkl', 'libmkl_rt not found'
        )
        return out


def _mpirun_version(text):
    # Hydra prints a build-details block; its "Version:" line is the one.
    found = re.search(r'^\s*Version:\s*(\S+)', text or '', re.M)
    if 'HYDRA' in (text or '') and found:
        return f'MPICH hydra {found.group(1)}'
    return first_line(text)


def _mpich_version(text):
    version = re.search(r'MPICH Version:\s*(\S+)', text or '')
    device = re.search(r'MPICH Device:\s*(\S+)', text or '')
    if not version:
        return None
    return version.group(1) + (f' (device {device.group(1)})' if device else '')


def _ucx_version(text):
    found = re.search(r'(?:Library|UCT) version[=:]?\s*([0-9][\w.]*)', text or '')
    return found.group(1) if found else None


def _libfabric_version(text):
    found = re.search(r'libfabric:\s*(\S+)', text or '')
    return found.group(1) if found else None

"""`clusterbench spack-envs`: validate spack_envs/ and every spack.lock
without Spack."""

from clusterbench.site import spackenv


def add_parser(sub):
    envs = sub.add_parser(
        'spack-envs', help='validate spack_envs/ and every spack.lock (no Spack needed)'
    )
    envs.add_argument('directory', nargs='?', default='spack_envs')
    envs.set_defaults(func=lambda args: spackenv.main([args.directory]))

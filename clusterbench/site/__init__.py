"""A site: what is set up once per system before any benchmark runs. The
interactive ``clusterbench site init`` (siteinit) and the facts it reads
(sitefacts) or asks the nodes for (nodeprobe), the Spack environment it
writes (spackskeleton), the Spack environments of ``spack_envs/`` (spackenv and
its parts), and the one list of software-stack names (stacknames).
"""

"""Configurations that one environment splits only because some tests name
less of its stack: merged into one (see :func:`merge_stacks`)."""

from collections import defaultdict


def merge_stacks(self):
    """Fill a configuration's unknown MPI/compiler/BLAS from its siblings,
    in the builder *self* of :mod:`clusterbench.report.assemble` (its
    configurations and every table keyed by them).

    Tests of one environment that say nothing of (say) BLAS belong with
    the tests of that environment that name one, when they name exactly
    one: HPCC in gnu-openmpi and HPLCheck %blas=openblas in gnu-openmpi
    are one configuration, not two.
    """
    groups = defaultdict(list)
    for key in self.configs:
        groups[(key[0], key[1], key[2], key[6], key[7])].append(key)
    remap = {}
    for keys in groups.values():
        known = [{k[i] for k in keys if k[i] is not None} for i in (3, 4, 5)]
        for key in keys:
            filled = list(key)
            for pos, values in zip((3, 4, 5), known):
                if filled[pos] is None and len(values) == 1:
                    filled[pos] = next(iter(values))
            filled = tuple(filled)
            if filled != key:
                remap[key] = filled
    if not remap:
        return
    merged = {}
    for key, config in self.configs.items():
        new = remap.get(key, key)
        target = merged.get(new)
        if target is None:
            config.key = new
            config.mpi, config.compiler, config.blas = new[3], new[4], new[5]
            if key != new:
                config.stack_origin += ' (completed from the same environment)'
            merged[new] = config
            continue
        target.hosts |= config.hosts
        target.sources |= config.sources
        target.completed += config.completed
        target.processor = target.processor or config.processor
        for host, facts in config.hwinfo.items():
            target.hwinfo.setdefault(host, facts)
    # The absorbed configurations' data now belongs to the merged ones.
    by_key = {}
    for key in self.configs:
        by_key[key] = merged[remap.get(key, key)]
    self.configs = merged

    def move(table):
        out = defaultdict(list) if isinstance(table, defaultdict) else {}
        for (key, *rest), value in table.items():
            new = (by_key[key].key, *rest)
            if isinstance(out, defaultdict):
                out[new] += value
            else:
                out.setdefault(new, value)
        return out

    self.samples = move(self.samples)
    self.case_info = move(self.case_info)
    self.failures = [(by_key[c.key] if c.key in by_key else c, f)
                     for c, f in self.failures]  # fmt: skip
    self.comm_cases = [(by_key[k].key, *rest) for k, *rest in self.comm_cases]

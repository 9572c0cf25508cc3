"""Node and fabric acceptance, and scaling, from ReFrame run reports.

``clusterbench acceptance nodes|links|scaling REPORT.json ...``:

* ``nodes``: rank the nodes of a battery run (every node at once) by robust
  z-score against their peers and by reference; name each node not accepted
  with the figure that condemned it (:mod:`clusterbench.acceptance.nodes`);
* ``links``: the fabric check's N x N matrices, each link judged against the
  other links and the partition's link specification
  (:mod:`clusterbench.acceptance.links`);
* ``scaling``: speedup and parallel efficiency against the smallest node
  count (:mod:`clusterbench.acceptance.scaling`).

Imports: core, parsers, judging, results
"""

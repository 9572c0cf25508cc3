"""Running a measuring session: `clusterbench run` (runner), `clusterbench
ab` (ab, its plan abplan), `clusterbench baseline` (baseline), the refusal
of a ``-S`` no check has (setvars), what ReFrame says while it runs
(reframe_output), the keeper that ends what ReFrame leaves running (reaper)
and the node lock of a measuring session (nodelock). What a session leaves
behind is read by :mod:`clusterbench.results`.
"""

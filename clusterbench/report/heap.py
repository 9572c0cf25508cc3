"""The report's large heap and Python's cycle collector.

Reading many reports and assembling them keeps millions of objects alive
(JSON data, figures, cells), and each of the collector's full passes walks
them all to find nothing: parsed JSON and the data model hold no cycles. At
100 configurations x 10 sessions that was about 2 s of 15 s of CPU.
Reading, assembling and the template run with the collector paused
(:func:`paused`); the plots, whose matplotlib figures are full of cycles,
run with it on and the objects alive before them out of its sight
(:func:`frozen`), in the forked workers too.
"""

import contextlib
import gc


@contextlib.contextmanager
def paused():
    """No cyclic collection inside; nested uses are one pause."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        # What was made inside joins the oldest generation unscanned, not
        # the youngest, whose next collection would walk it all.
        gc.freeze()
        gc.unfreeze()
        gc.enable()


@contextlib.contextmanager
def frozen():
    """Collections inside skip every object alive on entry (``gc.freeze``);
    they are collectable again on exit."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

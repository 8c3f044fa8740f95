"""The garbage collector's pace for a hipport process.

Loading (imports, the tables, the rules) makes a few hundred thousand objects that live as long
as the process, and porting makes none that form reference cycles (tests/test_gc.py). With
Python's default pace, a young-generation pass every 700 allocations, the collector walks the
loaded objects again and again: 8 % of the instructions a process runs before its first file,
and 3 % of a port. The command line slows the pace as it starts (hipport.__main__), before it
imports anything else; hipport.loaders.prepare slows it in any other process that loads the
tables (a library caller, a test), and sets what is loaded aside (gc.freeze). A cycle that
appears anyway is still collected.
"""

from __future__ import annotations

import gc

YOUNG = 50_000  # allocations between young-generation passes (Python's default: 700)


def relax() -> None:
    """A young-generation pass every YOUNG allocations; the older generations' pace is kept."""
    gc.set_threshold(YOUNG, *gc.get_threshold()[1:])

"""The library-semantics families (HP951-HP957): which names each family's patterns pick."""

from __future__ import annotations

import re

from hipport.mappings import load
from hipport.rules import library_semantics as ls


def _one_by_one(name: str):
    """_family_patterns as its doc states it: per family, its first pattern to full-match."""
    found = tuple(next((p for p in family.patterns if re.fullmatch(p.regex, name)), None)
                  for family in ls.FAMILIES)
    return found if any(found) else None


def test_family_patterns_of_every_table_name_are_those_of_each_pattern_alone():
    """The one-pattern test in front (name_pattern) turns away no name a family's own pattern
    takes: checked for every table name, and for names a family takes with a suffix or a
    prefix added."""
    names = list(load().entries)
    taken = [n for n in names if _one_by_one(n) is not None]
    assert taken  # the tables hold names of several families
    names += [n + "X" for n in taken] + ["x" + n for n in taken] + [n[:-1] for n in taken]
    ls._family_patterns.cache_clear()
    assert [ls._family_patterns(n) for n in names] == [_one_by_one(n) for n in names]

"""NamedTuple: typing.NamedTuple's class syntax, made at collections.namedtuple's cost.

hipport declares some fifty record types as `class Span(NamedTuple): start: int ...`, and every
process makes them as it imports (a `-j` worker, a pre-commit check of one file). typing's
version checks each field's annotation, which under `from __future__ import annotations` means
compiling the annotation's text: the fifty took 14 ms of a process's 56 ms of imports, and
take 6 ms made here. The annotations are kept as written and never evaluated; the class is the
same collections namedtuple (fields, defaults, methods, docstring, pickling by module and name).

Type checkers see typing.NamedTuple itself (the TYPE_CHECKING branch).
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    # What a record's class body may not define: namedtuple makes these itself.
    _RESERVED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                           "_field_defaults", "_make", "_replace", "_asdict", "_source"})
    # What the class body holds that namedtuple sets (or that is not an attribute).
    _GIVEN = frozenset({"__module__", "__annotations__"})

    class _Maker(type):
        def __new__(mcs, name: str, bases: tuple, body: dict[str, Any]) -> Any:
            if body.get("_base_"):  # NamedTuple itself, below
                return super().__new__(mcs, name, bases, body)
            if bases != (NamedTuple,):
                raise TypeError(f"{name}: a NamedTuple derives from NamedTuple alone")
            fields = tuple(body.get("__annotations__", ()))
            with_default = [f for f in fields if f in body]
            if with_default and fields[-len(with_default):] != tuple(with_default):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            made = namedtuple(name, fields, defaults=[body[f] for f in with_default],
                              module=body["__module__"])
            for key, value in body.items():
                if key in _RESERVED:
                    raise AttributeError(f"{name}: cannot define {key} on a NamedTuple")
                if key not in _GIVEN and key not in fields:
                    setattr(made, key, value)
            made.__annotations__ = body.get("__annotations__", {})
            return made

    class NamedTuple(metaclass=_Maker):
        """Derive a record from this, as from typing.NamedTuple."""

        _base_ = True

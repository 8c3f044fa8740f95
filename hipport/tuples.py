"""NamedTuple: typing.NamedTuple's class syntax, made at a fraction of collections.namedtuple's cost.

hipport declares some sixty record types as `class Span(NamedTuple): start: int ...`, and every
process makes them as it imports (a `-j` worker, a pre-commit check of one file). typing's
version checks each field's annotation, which under `from __future__ import annotations` means
compiling the annotation's text: fifty records took 14 ms of a process's 56 ms of imports.
collections.namedtuple, which took 6 ms for them, still compiles a `__new__` for each class
from its source text and words a getter and a docstring per field. Here a record's `__new__`
is a copy of one compiled per number of fields with the argument names changed, its fields'
getters are namedtuple's own (a getter holds only a position, so one set serves every record),
and its methods are shared. The class is what namedtuple makes (fields, defaults, methods,
docstring, pickling by module and name: `tests/test_tuples.py` compares the two); the
annotations are kept as written and never evaluated.

Type checkers see typing.NamedTuple itself (the TYPE_CHECKING branch).
"""

from __future__ import annotations

from collections import namedtuple
from types import FunctionType

from hipport import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    # What a record's class body may not define: the record has these from here.
    _RESERVED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                           "_field_defaults", "_make", "_replace", "_asdict", "_source"})

    _tuple_new = tuple.__new__
    _NEW_CODE: dict[int, Any] = {}  # number of fields -> the code of a __new__ taking that many
    _getters: tuple = ()  # namedtuple's getter of each field position, shared by every record

    def _new(name: str, fields: tuple[str, ...], defaults: tuple) -> FunctionType:
        """`__new__(_cls, <fields>)`: the code made once for records of this many fields, with
        their names as its arguments (keywords, defaults and error messages follow them)."""
        code = _NEW_CODE.get(len(fields))
        if code is None:
            args = "".join(f"_{i}, " for i in range(len(fields)))
            template = eval(f"lambda _cls, {args}: _tuple_new(_cls, ({args}))",  # noqa: S307 - our own text
                            {"_tuple_new": _tuple_new})
            code = _NEW_CODE[len(fields)] = template.__code__
        code = code.replace(co_varnames=("_cls", *fields), co_name="__new__", co_qualname=f"{name}.__new__")
        new = FunctionType(code, {"_tuple_new": _tuple_new}, "__new__", defaults or None)
        new.__doc__ = f"Create new instance of {name}({_arguments(fields)})"
        return new

    def _arguments(fields: tuple[str, ...]) -> str:
        """The fields as namedtuple's docstrings list them (a tuple's text: `a,` for one)."""
        return ", ".join(fields) + ("," if len(fields) == 1 else "")

    def _getters_for(count: int) -> tuple:
        global _getters
        if count > len(_getters):  # one namedtuple with enough fields lends its getters
            made = namedtuple("_Positions", [f"f{i}" for i in range(max(count, 32))])
            _getters = tuple(made.__dict__[f] for f in made._fields)
        return _getters[:count]

    @classmethod
    def _make(cls, iterable):
        """Make a new record from a sequence or iterable."""
        result = _tuple_new(cls, iterable)
        if len(result) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
        return result

    def _replace(self, /, **changes):
        """Return a new record with the given fields replaced by new values."""
        result = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return result

    def _repr(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={v!r}' for f, v in zip(self._fields, self))})"

    def _asdict(self) -> dict:
        """A new dict mapping field names to their values."""
        return dict(zip(self._fields, self))

    def _getnewargs(self) -> tuple:
        """The record as a plain tuple: what copy and pickle pass to __new__."""
        return tuple(self)

    _repr.__name__ = "__repr__"
    _getnewargs.__name__ = "__getnewargs__"

    class _Maker(type):
        def __new__(mcs, name: str, bases: tuple, body: dict[str, Any]) -> Any:
            if body.get("_base_"):  # NamedTuple itself, below
                return super().__new__(mcs, name, bases, body)
            if bases != (NamedTuple,):
                raise TypeError(f"{name}: a NamedTuple derives from NamedTuple alone")
            fields = tuple(body.get("__annotations__", ()))
            for field in fields:  # a class body's names are identifiers: namedtuple's one more rule
                if field.startswith("_"):
                    raise ValueError(f"{name}: field names cannot start with an underscore: {field!r}")
            with_default = [f for f in fields if f in body]
            if with_default and fields[-len(with_default):] != tuple(with_default):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            for key in body:
                if key in _RESERVED:
                    raise AttributeError(f"{name}: cannot define {key} on a NamedTuple")
            defaults = tuple(body[f] for f in with_default)
            namespace = {
                "__doc__": f"{name}({_arguments(fields)})",  # these two the class body may replace
                "__repr__": _repr,
                **{k: v for k, v in body.items() if k not in fields},
                "__slots__": (),
                "_fields": fields,
                "_field_defaults": dict(zip(with_default, defaults)),
                "__new__": _new(name, fields, defaults),
                "_make": _make,
                "_replace": _replace,
                "_asdict": _asdict,
                "__getnewargs__": _getnewargs,
                "__match_args__": fields,
                "__annotations__": body.get("__annotations__", {}),
                **dict(zip(fields, _getters_for(len(fields)))),
            }
            return type(name, (tuple,), namespace)

    class NamedTuple(metaclass=_Maker):
        """Derive a record from this, as from typing.NamedTuple."""

        _base_ = True

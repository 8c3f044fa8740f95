"""hipport.tuples.NamedTuple: typing.NamedTuple's records, without evaluating annotations."""

from __future__ import annotations

import pickle
import re
import typing
from pathlib import Path

import pytest

from hipport.tuples import NamedTuple

ROOT = Path(__file__).resolve().parents[1]


class Span(NamedTuple):
    """A byte span."""

    start: int
    end: int = 0
    label: str = "x"

    @property
    def size(self) -> int:
        return self.end - self.start

    def shifted(self, by: int) -> Span:
        return self._replace(start=self.start + by, end=self.end + by)


def test_a_record_is_a_namedtuple_with_its_fields_defaults_and_methods():
    s = Span(3, 7)
    assert s == (3, 7, "x") and isinstance(s, tuple)
    assert Span._fields == ("start", "end", "label")
    assert Span._field_defaults == {"end": 0, "label": "x"}
    assert Span(1) == (1, 0, "x") and Span(start=2, label="y") == (2, 0, "y")
    assert s.size == 4 and s.shifted(10) == Span(13, 17)
    assert s._asdict() == {"start": 3, "end": 7, "label": "x"}
    assert Span.__doc__ == "A byte span."
    assert Span.__annotations__ == {"start": "int", "end": "int", "label": "str"}
    assert (Span.__module__, Span.__qualname__, Span.__bases__) == (__name__, "Span", (tuple,))
    start, end, label = s
    assert (start, end, label) == (3, 7, "x")


def test_a_record_pickles_by_name():
    s = Span(1, 2, "z")
    back = pickle.loads(pickle.dumps(s))
    assert back == s and type(back) is Span


def test_annotations_are_not_evaluated(monkeypatch):
    """typing.NamedTuple turns each field's annotation into a ForwardRef, compiling its text:
    the cost this class avoids."""
    def refuse(*args, **kwargs):
        raise AssertionError("an annotation was evaluated")

    monkeypatch.setattr(typing, "ForwardRef", refuse)

    class Pair(NamedTuple):
        left: SomeName  # noqa: F821 - never looked up
        right: list[SomeOther] | None = None  # noqa: F821

    assert Pair(1) == (1, None)


def test_what_typing_refuses_is_refused():
    with pytest.raises(TypeError, match="without a default follows"):
        class Bad(NamedTuple):
            a: int = 0
            b: int

    with pytest.raises(AttributeError, match="_replace"):
        class Clash(NamedTuple):
            a: int

            def _replace(self, **kw):
                return self

    with pytest.raises(TypeError, match="alone"):
        class Mixed(NamedTuple, dict):
            a: int


def test_hipport_makes_its_records_here():
    """Every module declares its records with this NamedTuple, not typing's."""
    typing_import = re.compile(r"^from typing import [^\n]*\bNamedTuple\b", re.M)
    offenders = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "hipport").rglob("*.py"))
                 if p.name != "tuples.py" and typing_import.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


@pytest.mark.parametrize("fields, defaults", [
    ((), ()), (("a",), ()), (("a",), (1,)), (("a", "b", "c"), ()), (("a", "b", "c"), (None, 2)),
    (tuple(f"f{i}" for i in range(40)), (7,)),  # more fields than the first set of getters
])
def test_a_record_behaves_as_collections_namedtuple_makes_it(fields, defaults):
    """The same class as namedtuple's, but for how it is made: every method, error and
    attribute a caller may touch."""
    import copy
    from collections import namedtuple

    body = {"__module__": __name__, "__qualname__": "Rec", "__annotations__": dict.fromkeys(fields, "int"),
            **dict(zip(fields[len(fields) - len(defaults):], defaults))}
    ours = type(NamedTuple)("Rec", (NamedTuple,), body)
    theirs = namedtuple("Rec", fields, defaults=defaults, module=__name__)
    values = list(range(len(fields)))
    a, b = ours(*values), theirs(*values)
    assert a == b and repr(a) == repr(b) and a._asdict() == b._asdict() and hash(a) == hash(b)
    assert ours._fields == theirs._fields and ours._field_defaults == theirs._field_defaults
    assert ours.__match_args__ == theirs.__match_args__ and ours.__doc__ == theirs.__doc__
    assert ours.__slots__ == () and not hasattr(a, "__dict__") and type(a).__mro__[1:] == (tuple, object)
    for i, name in enumerate(fields):
        assert getattr(a, name) == i
        with pytest.raises(AttributeError):
            setattr(a, name, 0)
    assert ours._make(values) == a and type(ours._make(values)) is ours
    assert copy.copy(a) == a and type(copy.deepcopy(a)) is ours
    if fields:
        kwargs = dict(zip(fields, values))
        assert ours(**kwargs) == theirs(**kwargs)
        assert a._replace(**{fields[0]: 99}) == b._replace(**{fields[0]: 99})
        required = len(fields) - len(defaults)
        if required:
            assert ours(*values[:required]) == theirs(*values[:required])
        with pytest.raises(TypeError) as ours_error:
            ours(*values, 0)
        with pytest.raises(TypeError) as theirs_error:
            theirs(*values, 0)
        assert str(ours_error.value).replace("Rec.__new__", "__new__") == \
            str(theirs_error.value).replace("Rec.__new__", "__new__")
    for make in (ours, theirs):
        with pytest.raises(TypeError, match="Expected"):
            make._make([*values, 0])
        with pytest.raises(ValueError, match="unexpected field names"):
            make(*values)._replace(nope=1)


def test_a_record_may_use_super_and_override_repr():
    class Named(NamedTuple):
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __eq__(self, other: object) -> bool:
            return super().__eq__(other)

        __hash__ = tuple.__hash__

    assert repr(Named("x")) == "<x>" and Named("x") == ("x",)


def test_a_field_name_may_not_start_with_an_underscore():
    with pytest.raises(ValueError, match="underscore"):
        class Private(NamedTuple):
            _a: int

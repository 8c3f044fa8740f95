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

from dataclasses import fields

from hipport.findings import Finding, severity_at_least


def test_to_json_names_every_field_in_order():
    f = Finding("a.cu", 1, 2, 3, 4, "HP101", "dynamic-parallelism", "error", "high", "m", "s", "x")
    assert list(f.to_json()) == [x.name for x in fields(Finding)]
    assert list(f.to_json().values()) == [getattr(f, x.name) for x in fields(Finding)]


def test_severity_order():
    assert severity_at_least("error", "warning") and not severity_at_least("info", "warning")

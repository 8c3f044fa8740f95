import pytest

from hipport.findings import Finding, finding_of, severity_at_least


def test_to_json_names_every_field_in_order():
    f = Finding("a.cu", 1, 2, 3, 4, "HP101", "dynamic-parallelism", "error", "high", "m", "s", "x")
    assert list(f.to_json()) == list(Finding._fields)
    assert list(f.to_json().values()) == [getattr(f, name) for name in Finding._fields] == list(f.to_tuple())


def test_severity_order():
    assert severity_at_least("error", "warning") and not severity_at_least("info", "warning")


def test_finding_of_rebuilds_a_finding_from_its_tuple():
    f = Finding(path="a.cu", line=3, column=5, end_line=3, end_column=9, rule="HP401",
                category="warp-size", severity="warning", effort="medium", message="m",
                suggestion="s", snippet="x")
    g = finding_of(f.to_tuple())
    assert g == f and hash(g) == hash(f) and g.to_json() == f.to_json() and type(g) is Finding
    with pytest.raises(ValueError):
        finding_of(f.to_tuple()[:-1])

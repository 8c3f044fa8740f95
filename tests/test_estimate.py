"""The estimate: arithmetic pinned on given counts and rates, rates from [tool.hipport.estimate],
calibration by non-negative least squares, and `hipport estimate` on the bundled example."""

from __future__ import annotations

import json
import random
import tomllib
from pathlib import Path

import jsonschema
import pytest

from hipport import estimate as est
from hipport.errors import HipportError
from clitools import hipport

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "saxpy_ops"
PROJECT = REPO / "fixtures" / "projects" / "nbody_lite"

RATES = est.Rates(
    review_minutes=est.Range(0.5, 1.0, 2.0),
    effort_hours={"trivial": est.Range(0.1, 0.2, 0.5), "low": est.Range(0.5, 1.0, 2.0),
                  "medium": est.Range(1.0, 2.0, 4.0), "high": est.Range(4.0, 8.0, 16.0)},
    category_multiplier={"inline-ptx": 1.5},
    kernel_hours=est.Range(0.5, 1.0, 2.0),
    build_file_hours=est.Range(1.0, 2.0, 3.0),
    source="test rates",
)




def findings(n: int, category: str, effort: str, severity: str = "warning") -> list[dict]:
    return [{"category": category, "effort": effort, "severity": severity}] * n


# --- the arithmetic ---------------------------------------------------------------------------

def test_arithmetic_is_pinned():
    counts = est.counts_from(
        120,
        findings(12, "warp-mask", "medium") + findings(2, "inline-ptx", "high", "error")
        + findings(3, "build-flags", "low"),
        kernels=5, build_files=2)
    e = est.compute(counts, RATES)
    # review 120 x 1 min = 2 h (1-4); warp-mask 12 x 2 h = 24 (12-48);
    # inline-ptx 2 x 8 h x 1.5 = 24 (12-48); build-flags 3 x 1 h = 3 (1.5-6);
    # kernels 5 x 1 h = 5 (2.5-10); build files 2 x 2 h = 4 (2-6).
    assert (e["low"], e["likely"], e["high"]) == (31.0, 62.0, 122.0)
    got = {(it["kind"], it["group"]): (it["count"], it["hours"]["low"], it["hours"]["likely"], it["hours"]["high"])
           for it in e["items"]}
    assert got == {
        ("review", "review"): (120, 1.0, 2.0, 4.0),
        ("finding", "build-flags"): (3, 1.5, 3.0, 6.0),
        ("finding", "inline-ptx"): (2, 12.0, 24.0, 48.0),
        ("finding", "warp-mask"): (12, 12.0, 24.0, 48.0),
        ("kernel", "kernels"): (5, 2.5, 5.0, 10.0),
        ("build-file", "build files"): (2, 2.0, 4.0, 6.0),
    }
    assert e["counts"] == {"references": 120, "trivial": 0, "low": 3, "medium": 12, "high": 2,
                           "kernels": 5, "build_files": 2}
    assert list(e["by_group"])[:2] in (["inline-ptx", "warp-mask"], ["warp-mask", "inline-ptx"])


def test_the_reasoning_reads_line_by_line():
    counts = est.counts_from(120, findings(12, "warp-mask", "medium") + findings(2, "inline-ptx", "high"),
                             kernels=5, build_files=2)
    texts = [it["text"] for it in est.compute(counts, RATES)["items"]]
    assert texts == [
        "120 converted CUDA API references × 1 min (0.5–2) review",
        "2 inline-ptx findings (high effort) × 8 h (4–16) × 1.5 for inline-ptx",
        "12 warp-mask findings (medium effort) × 2 h (1–4)",
        "5 kernels × 1 h (0.5–2) to build, run and check on an AMD GPU",
        "2 build files × 2 h (1–3)",
    ]


def test_one_effort_class_per_line_within_a_category():
    counts = est.counts_from(0, findings(1, "warp-size", "low") + findings(2, "warp-size", "medium", "error"),
                             kernels=0, build_files=0)
    items = est.compute(counts, RATES)["items"]
    assert [(it["effort"], it["count"], it["severity"]) for it in items] == [("low", 1, "warning"), ("medium", 2, "error")]
    assert est.compute(counts, RATES)["by_group"] == {"warp-size": {"low": 2.5, "likely": 5.0, "high": 10.0}}


def test_nothing_to_do_is_zero_hours():
    e = est.compute(est.Counts(), est.DEFAULTS)
    assert (e["low"], e["likely"], e["high"], e["items"]) == (0, 0, 0, [])


def test_estimate_on_the_fixture_project_with_configured_rates(tmp_path, capsys):
    """nbody_lite with the rates of RATES in .hipport.toml: the hours follow from the counts."""
    import shutil
    src = tmp_path / "nbody_lite"
    shutil.copytree(PROJECT, src)
    (src / ".hipport.toml").write_text(est.toml_snippet(RATES).replace("[tool.hipport.", "["), encoding="utf-8")
    assert hipport("estimate", src, "--format", "json", "-j", "1") == 0
    report = json.loads(capsys.readouterr().out)
    e = report["estimate"]
    c = e["counts"]
    assert c["references"] == 33 and c["kernels"] == 3 and c["build_files"] == 1
    by_cat = report["breakdown"]
    inline = by_cat.get("inline-ptx", {}).get("findings", 0)
    expected = (c["references"] * 1.0 / 60 + c["trivial"] * 0.2 + c["low"] * 1.0 + c["medium"] * 2.0
                + (c["high"] - inline) * 8.0 + inline * 8.0 * 1.5 + c["kernels"] * 1.0 + c["build_files"] * 2.0)
    assert e["likely"] == pytest.approx(expected, abs=1e-3)
    assert e["rates"]["source"].endswith(".hipport.toml")


# --- rates from the configuration --------------------------------------------------------------

def test_rates_from_a_table():
    rates = est.rates_from_table({
        "review-minutes": [0.2, 0.5, 1], "kernel_hours": 2,
        "effort-hours": {"high": [5, 10, 20]}, "category-multiplier": {"warp-mask": 0.5},
    }, source="x")
    assert rates.review_minutes == est.Range(0.2, 0.5, 1.0)
    assert rates.kernel_hours == est.Range(2.0, 2.0, 2.0)
    assert rates.effort_hours["high"] == est.Range(5.0, 10.0, 20.0)
    assert rates.effort_hours["low"] == est.DEFAULTS.effort_hours["low"]
    assert rates.multiplier("warp-mask") == 0.5 and rates.multiplier("inline-ptx") == 1.25
    assert rates.source == "x"


@pytest.mark.parametrize("table, words", [
    ({"kernel-hour": 1}, "unknown key 'kernel-hour'"),
    ({"kernel-hours": [3, 2, 1]}, "low <= likely <= high"),
    ({"kernel-hours": [1, 2]}, "[low, likely, high]"),
    ({"kernel-hours": -1}, "non-negative"),
    ({"kernel-hours": True}, "[low, likely, high]"),
    ({"effort-hours": {"huge": 1}}, "unknown effort class 'huge'"),
    ({"category-multiplier": {"warp": 2}}, "unknown category 'warp'"),
    ({"category-multiplier": {"warp-mask": "2"}}, "non-negative number"),
])
def test_bad_tables_are_refused(table, words):
    with pytest.raises(HipportError) as exc:
        est.rates_from_table(table)
    assert words in str(exc.value)


def test_rates_load_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hipport]\nlaunch-syntax = "hip"\n\n[tool.hipport.estimate]\nbuild-file-hours = [1, 1, 1]\n',
        encoding="utf-8")
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n", encoding="utf-8")
    rates = est.load_rates([tmp_path])
    assert rates.build_file_hours == est.Range(1.0, 1.0, 1.0)
    assert rates.source == str(tmp_path / "pyproject.toml")
    assert est.load_rates([tmp_path / "k.cu"]).source == rates.source
    from hipport.config import load_settings
    assert load_settings([tmp_path]).launch_syntax == "hip"  # the sub-table does not disturb Settings


def test_toml_snippet_round_trips():
    from hipport.rules import CATEGORY_CODES
    table = tomllib.loads(est.toml_snippet(RATES))["tool"]["hipport"]["estimate"]
    again = est.rates_from_table(table, source=RATES.source)  # over the defaults
    assert (again.review_minutes, again.effort_hours, again.kernel_hours, again.build_file_hours) == \
        (RATES.review_minutes, RATES.effort_hours, RATES.kernel_hours, RATES.build_file_hours)
    assert all(again.multiplier(c) == RATES.multiplier(c) for c in CATEGORY_CODES)


# --- calibration ------------------------------------------------------------------------------

def test_nnls_clamps_at_zero():
    # Unconstrained: x = (1, -1). With x >= 0 the best is x2 = 0, x1 = 0.5.
    x = est.nnls([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [1.0, -1.0, 0.0])
    assert x == pytest.approx([0.5, 0.0])


def test_nnls_meets_the_optimality_conditions_on_random_problems():
    """KKT for min ||Ax - b||, x >= 0: with g = A'(Ax - b), g_i = 0 where x_i > 0, g_i >= 0 where x_i = 0."""
    rng = random.Random(5)
    for _ in range(40):
        rows, cols = rng.randint(5, 12), rng.randint(1, 5)
        a = [[rng.uniform(0, 10) for _ in range(cols)] for _ in range(rows)]
        b = [rng.uniform(-20, 60) for _ in range(rows)]
        x = est.nnls(a, b)
        r = [sum(v * xi for v, xi in zip(row, x)) - t for row, t in zip(a, b)]
        g = [sum(row[i] * ri for row, ri in zip(a, r)) for i in range(cols)]
        scale = max(1.0, max(abs(v) for v in g))
        for xi, gi in zip(x, g):
            assert xi >= 0
            if xi > 1e-9:
                assert abs(gi) <= 1e-6 * scale
            else:
                assert gi >= -1e-6 * scale


def test_calibration_recovers_the_rates_that_made_the_data():
    truth = {"references": 0.01, "low": 0.75, "medium": 3.0, "high": 10.0, "kernels": 1.5, "build_files": 2.5}
    rng = random.Random(1)
    lines = ["project,hours," + ",".join(truth)]
    for i in range(12):
        counts = {k: rng.randint(0, 40) for k in truth}
        hours = sum(truth[k] * counts[k] for k in truth)
        lines.append(f"p{i},{hours}," + ",".join(str(counts[k]) for k in truth))
    fit = est.calibrate("\n".join(lines) + "\n", est.DEFAULTS, "past.csv")
    for k, v in truth.items():
        assert fit.fitted[k] == pytest.approx(v, rel=1e-6), k
    assert fit.rms == pytest.approx(0, abs=1e-6)
    assert fit.kept == ("trivial",)
    r = fit.rates
    medium = r.effort_hours["medium"]  # the default ratios 1:2:4 are kept
    assert (medium.low, medium.likely, medium.high) == pytest.approx((1.5, 3.0, 6.0))
    assert r.review_minutes.likely == pytest.approx(0.6)
    assert r.effort_hours["trivial"] == est.DEFAULTS.effort_hours["trivial"]
    assert set(r.category_multiplier.values()) == {1.0}
    assert r.source == "calibrated on past.csv"
    assert any("RMS error" in line for line in fit.lines())


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("references,low\n1,2\n", "`hours` column"),
    ("hours,bogus\n1,2\n", "unknown column 'bogus'"),
    ("hours,name\n1,x\n", "no count columns"),
    ("hours,low,high\n1,2,3\n", "give at least 2 past ports"),
    ("hours,low\n1,0\n2,0\n", "every count is zero"),
    ("hours,low\n1,x\n", "row 2"),
    ("hours,low\n-1,2\n", "non-negative"),
])
def test_bad_calibration_files(text, words):
    with pytest.raises(HipportError) as exc:
        est.calibrate(text, est.DEFAULTS)
    assert words in str(exc.value)


def test_calibration_accepts_comments_aliases_and_blank_cells():
    fit = est.calibrate("# past ports\nhours,Build-Files,low\n4,2,\n6,2,4\n", est.DEFAULTS)
    assert fit.fitted == pytest.approx({"low": 0.5, "build_files": 2.0})


# --- the command ------------------------------------------------------------------------------

def test_estimate_of_the_bundled_example_explains_itself(capsys):
    assert hipport("estimate", EXAMPLE, "-j", "1") == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Estimate for saxpy_ops: ") and "h (range " in lines[0]
    assert any(line.strip().startswith("81 converted CUDA API references × 0.25 min") for line in lines)
    assert any("kernels × 0.5 h" in line for line in lines)
    assert any(line.strip().startswith("total") for line in lines)
    for key in ("review-minutes", "effort-hours.medium", "kernel-hours", "build-file-hours", "category-multiplier"):
        assert key in out
    assert "Assumptions:" in out and all(a in out for a in est.ASSUMPTIONS)


def test_estimate_text_total_matches_the_json(capsys):
    assert hipport("estimate", EXAMPLE, "--format", "json", "-j", "1") == 0
    report = json.loads(capsys.readouterr().out)
    schema = json.loads((REPO / "hipport" / "report" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(report)
    e = report["estimate"]
    assert e["likely"] == pytest.approx(sum(it["hours"]["likely"] for it in e["items"]), abs=0.01)
    assert report["summary"]["kernels"] == 4
    assert hipport("estimate", EXAMPLE, "-j", "1") == 0
    assert f"Estimate for saxpy_ops: {est.headline(e)}" in capsys.readouterr().out


def test_estimate_markdown_and_output_file(tmp_path, capsys):
    out = tmp_path / "est.md"
    assert hipport("estimate", EXAMPLE, "--format", "markdown", "-o", out, "-j", "1") == 0
    assert capsys.readouterr().out == ""
    assert out.read_text(encoding="utf-8").startswith("# Migration report: saxpy_ops\n")


@pytest.mark.parametrize("fmt, jinja", [("text", False), ("json", False), ("markdown", True)])
def test_only_a_markdown_estimate_loads_the_templates(tmp_path, fmt, jinja):
    """jinja2 is a quarter of a cached estimate's time: text and JSON are written without it."""
    import os
    import subprocess
    import sys

    code = ("import sys\nfrom hipport.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('jinja2' in sys.modules, file=sys.stderr)")
    env = dict(os.environ, HIPPORT_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", code, "estimate", str(EXAMPLE), "--format", fmt, "-j", "1"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout and done.stderr.strip().splitlines()[-1] == str(jinja)


def test_estimate_writes_nothing_next_to_the_sources(tmp_path, capsys):
    import shutil
    src = tmp_path / "proj"
    shutil.copytree(EXAMPLE, src)
    before = sorted(p.relative_to(src).as_posix() for p in src.rglob("*"))
    assert hipport("estimate", src, "-j", "1") == 0
    assert sorted(p.relative_to(src).as_posix() for p in src.rglob("*")) == before


def test_estimate_with_calibration(tmp_path, capsys):
    csv = tmp_path / "past.csv"
    csv.write_text("name,hours,references,low,kernels,build_files\n"
                   "a,10,100,4,4,1\nb,20,300,8,6,2\nc,7,50,2,3,1\nd,30,400,10,12,3\n", encoding="utf-8")
    assert hipport("estimate", EXAMPLE, "--calibrate", csv, "-j", "1") == 0
    out = capsys.readouterr().out
    assert out.startswith("Calibrated on 4 past ports")
    assert "[tool.hipport.estimate]" in out and f"Rates (calibrated on {csv}" in out
    assert hipport("estimate", EXAMPLE, "--calibrate", csv, "--format", "json", "-j", "1") == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["estimate"]["rates"]["source"] == f"calibrated on {csv}"
    assert "Calibrated on 4 past ports" in captured.err


def test_estimate_bad_calibration_file_is_a_usage_error(tmp_path, capsys):
    assert hipport("estimate", EXAMPLE, "--calibrate", tmp_path / "missing.csv") == 2
    assert b"missing.csv" in capsys.readouterr().err.encode()
    bad = tmp_path / "bad.csv"
    bad.write_text("hours\n1\n", encoding="utf-8")
    assert hipport("estimate", EXAMPLE, "--calibrate", bad) == 2

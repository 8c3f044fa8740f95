"""The migration report: report.json (against its schema), report.html (read back with an HTML
parser), report.md (snapshot), the kernel finder, and what `port --report` prints.

The fixture project is fixtures/projects/nbody_lite: real CUDA (nvcc -c accepts it) with two
files of kernels, a header, cuBLAS/cuRAND host calls, an unsupported API, a build file, and a
comment holding `<script>alert(1)</script>` on a flagged line.

`pytest --update-expected` rewrites tests/expected/report/ (review the diff before committing).
"""

from __future__ import annotations

import difflib
import json
import shutil
import sys
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from hipport import kernel_links as links
from hipport.source import Source
from hipport import kernels as kern
from hipport.config import Settings
from hipport.loaders import tools
from hipport.pipeline import port_source
from hipport.results import FileResult
from hipport.report import model
from hipport.rules import REGISTRY, all_rules
from clitools import hipport

REPO = Path(__file__).resolve().parents[1]
PROJECT = REPO / "fixtures" / "projects" / "nbody_lite"
EXAMPLE = REPO / "examples" / "saxpy_ops"
EXPECTED = REPO / "tests" / "expected" / "report"
SCRIPT_TEXT = "<script>alert(1)</script>"




def schema() -> dict:
    return json.loads(resources.files("hipport.report").joinpath("report.schema.json").read_text(encoding="utf-8"))


def validate(report: dict) -> None:
    jsonschema.Draft202012Validator(schema()).validate(report)


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """nbody_lite ported to OUT with --report REP: (report dict, report folder, stderr text)."""
    tmp = tmp_path_factory.mktemp("nbody")
    out, rep = tmp / "out", tmp / "rep"
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = hipport("port", PROJECT, "-o", out, "--report", rep, "-j", "1")
    assert code == 0
    return json.loads((rep / "report.json").read_text(encoding="utf-8")), rep, err.getvalue()


# --- the schema and report.json --------------------------------------------------------------

def test_schema_and_templates_ship_inside_the_package():
    files = resources.files("hipport.report")
    jsonschema.Draft202012Validator.check_schema(schema())
    assert files.joinpath("templates", "report.html.j2").is_file()
    assert files.joinpath("templates", "report.md.j2").is_file()


def test_report_json_validates(ported):
    report, rep, _ = ported
    validate(report)
    assert sorted(p.name for p in rep.iterdir()) == ["report.html", "report.json", "report.md"]


def test_schema_rejects_a_broken_report(ported):
    report = json.loads(json.dumps(ported[0]))
    del report["estimate"]["likely"]
    with pytest.raises(jsonschema.ValidationError):
        validate(report)


def test_project_totals(ported):
    report = ported[0]
    s = report["summary"]
    assert report["project"] == {"name": "nbody_lite"}
    # 33 CUDA references rewritten, cudaFuncGetName has no HIP equivalent.
    assert (s["api_converted"], s["api_unsupported"], s["api_references"]) == (33, 1, 34)
    assert s["pct_converted"] == round(100 * 33 / 34, 1)
    sources = [f for f in report["files"] if f["kind"] in ("cuda", "cpp")]
    assert s["lines"] == sum(f["lines"] for f in sources)
    assert s["lines_changed"] == sum(f["lines_changed"] for f in sources)
    assert s["pct_lines_changed"] == round(100 * s["lines_changed"] / s["lines"], 1)
    assert s["findings"] == len(report["findings"]) == sum(b["findings"] for b in report["breakdown"].values())
    assert s["by_severity"] == {"error": 2, "info": 1, "warning": 8}
    assert sum(s["by_effort"].values()) == s["findings"]
    assert report["build_files"] == ["CMakeLists.txt"] and s["build_files"] == 1
    assert s["estimate_hours"] == {k: report["estimate"][k] for k in ("low", "likely", "high")}


def test_files_keep_their_keys(ported):
    for f in ported[0]["files"]:
        for key in ("source", "output", "status", "lines", "lines_changed", "replacements", "by_library",
                    "findings", "unmapped", "changed", "kernels"):
            assert key in f, (f["source"], key)
    main_cu = next(f for f in ported[0]["files"] if f["source"] == "src/main.cu")
    assert main_cu["by_library"]["cublas"] == 5 and main_cu["by_library"]["curand"] == 7
    assert main_cu["unmapped"] == [{"name": "cudaFuncGetName", "count": 1, "line": 35, "reason": "no HIP equivalent"}]


def test_dependencies_name_rocm_libraries_and_packages(ported):
    deps = {d["library"]: d for d in ported[0]["dependencies"]}
    assert list(deps) == ["HIP runtime", "hipRAND", "hipBLAS"]
    assert deps["hipBLAS"]["replaces"] == ["cuBLAS"] and deps["hipBLAS"]["package"] == "hipblas-dev"
    assert deps["hipRAND"]["package"] == "hiprand-dev" and deps["hipRAND"]["references"] == 7
    assert deps["hipBLAS"]["files"] == ["src/main.cu"]
    assert sum(d["references"] for d in deps.values()) == ported[0]["summary"]["api_converted"]


def test_dependencies_follow_libs_roc():
    results = [FileResult("a.cu", "a.cu", "cuda", "ported", changed=True, replacements=3,
                          by_library={"cublas": 2, "runtime": 1})]
    report = model.build(results, Settings(libs="roc"), (6, 3))
    assert [(d["library"], d["package"]) for d in report["dependencies"]] == [
        ("HIP runtime", "hip-dev"), ("rocBLAS", "rocblas-dev")]


def test_unsupported_apis_with_locations(ported):
    assert ported[0]["unsupported"] == [{
        "name": "cudaFuncGetName", "count": 1, "reason": "no HIP equivalent",
        "locations": [{"path": "src/main.cu", "line": 35, "count": 1}]}]


def test_kernels_with_launch_sites(ported):
    got = [(k["name"], k["path"], k["line"], [(x["path"], x["line"], x["syntax"]) for x in k["launches"]])
           for k in ported[0]["kernels"]]
    assert got == [
        ("compute_forces", "src/forces.cu", 6, [("src/integrate.cu", 24, "launch-api")]),
        ("kinetic_energy", "src/forces.cu", 25, [("src/forces.cu", 39, "<<<>>>")]),
        ("integrate", "src/integrate.cu", 10, [("src/integrate.cu", 25, "<<<>>>")]),
    ]
    assert ported[0]["summary"]["kernel_launches"] == 3
    forces = next(f for f in ported[0]["files"] if f["source"] == "src/forces.cu")
    assert forces["kernels"] == ["compute_forces", "kinetic_energy"]


def test_top_risks_put_errors_first(ported):
    risks = ported[0]["top_risks"]
    assert [r["rule"] for r in risks[:2]] == ["HP301", "HP501"]
    assert risks[0]["first"] == {"path": "src/integrate.cu", "line": 6}
    assert risks[0]["fix"] == REGISTRY["HP301"].section("Fix")
    assert len(risks) == model.TOP_RISKS


def test_rules_carry_their_fix_advice(ported):
    rules = ported[0]["rules"]
    assert set(rules) == {f["rule"] for f in ported[0]["findings"]}
    all_rules()
    for code, r in rules.items():
        assert r["fix"] == REGISTRY[code].section("Fix") and r["fix"]


def test_example_and_an_empty_tree_validate(tmp_path):
    for tree in (EXAMPLE, tmp_path / "empty"):
        tree.mkdir(exist_ok=True)
        settings = Settings(jobs=1)
        report = model.from_paths([tree], settings, progress=False)
        validate(report)
    assert report["summary"]["pct_converted"] is None and report["estimate"]["likely"] == 0


def test_an_empty_tree_renders(tmp_path):
    from hipport.report import html, markdown
    (tmp_path / "notes.txt").write_text("nothing to port\n", encoding="utf-8")
    report = model.from_paths([tmp_path], Settings(jobs=1), progress=False)
    page = Page(html.render(report))
    assert page.text("pct-converted") == "n/a" and page.text("estimate-likely") == "0 h"
    assert page.findings == [] and "hours-chart" not in page.by_id
    text = markdown.render(report)
    assert "No findings." in text and "n/a" in text


def test_failed_and_skipped_files_still_validate(tmp_path):
    (tmp_path / "bin.cu").write_bytes(b"\0\1\2cudaMalloc")
    (tmp_path / "k.cu").write_bytes(b"__global__ void k() {}\nvoid f() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }\n")
    report = model.from_paths([tmp_path], Settings(jobs=1), progress=False)
    validate(report)
    assert {f["source"]: f["status"] for f in report["files"]} == {"bin.cu": "skipped", "k.cu": "ported"}
    assert [k["name"] for k in report["kernels"]] == ["k"]


def test_build_reads_no_file_when_results_carry_kernels(tmp_path, monkeypatch):
    """The contract for the pipeline: a FileResult with a `kernels` Scan is used as it is."""

    scan = links.Scan((links.Kernel("k", 3, True),), (links.Launch("k", 9, "<<<>>>"),))
    results = [FileResult("a.cu", "a.cu", "cuda", "unchanged", lines=10, kernels=scan)]

    def no_reads(*a, **k):
        raise AssertionError("the report read a file")

    monkeypatch.setattr(Path, "read_bytes", no_reads)
    report = model.build(results, Settings(), (6, 3), root=tmp_path)
    assert report["kernels"] == [{"name": "k", "path": "a.cu", "line": 3,
                                  "launches": [{"path": "a.cu", "line": 9, "syntax": "<<<>>>"}]}]


def summary_of(records, settings, root=None) -> dict:
    """What `port` prints without --report: the records counted as they come."""
    totals = model.Totals(settings, root, False)
    for r in records:
        totals.add(r)
    return totals.summary()


def test_records_and_file_results_build_the_same_report():
    """The runner hands the report records (FileResult.record()); the summary `port` prints
    without --report is build()'s own summary and estimate."""
    from hipport import runner

    settings = Settings(jobs=1)
    root, jobs = runner.plan([PROJECT], settings, runner.DRY_RUN, None)
    records = [o.record for o in runner.run(jobs, 1)]
    results = [port_source(j.file.path.read_bytes(), j.file.rel, j.file.kind, settings) for j in jobs]
    report = model.build(records, settings, (6, 3), root=root)
    assert model.build([p.result for p in results], settings, (6, 3), root=root) == report
    assert summary_of(records, settings, root) == {"summary": report["summary"], "estimate": report["estimate"]}
    s = report["summary"]
    assert s["kernels"] and s["findings"] and s["api_unsupported"] and s["build_files"]


def test_the_breakdown_counts_the_findings_in_one_pass(ported, monkeypatch):
    """The breakdown per category counts each finding's (category, severity, effort, rule) in
    C, then folds them: it made three Counters per finding (300,000 on a tree with 100,000
    findings). Twice the findings: twice the counts, no Counter more."""
    from collections import Counter

    from hipport.findings import SEVERITIES

    findings = ported[0]["findings"]
    made = [0]

    class Counting(Counter):
        def __init__(self, *args, **kwargs):
            made[0] += 1
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(model, "Counter", Counting)
    counts, out = [], []
    for times in (1, 2):
        made[0] = 0
        out.append(model._breakdown(findings * times, ported[0]["estimate"]))
        counts.append(made[0])
    assert counts[1] == counts[0]
    assert sorted(out[0]) == sorted({f["category"] for f in findings})
    for category, got in out[0].items():
        mine = [f for f in findings if f["category"] == category]
        assert got["findings"] == len(mine) and out[1][category]["findings"] == 2 * len(mine)
        assert got["rules"] == dict(sorted(Counter(f["rule"] for f in mine).items()))
        assert got["by_severity"] == {s: n for s in reversed(SEVERITIES) if (n := sum(f["severity"] == s for f in mine))}


# --- report.html, read back with an HTML parser -----------------------------------------------

class Page(HTMLParser):
    """Text by element id, finding rows, scripts, and every attribute that could load something."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.by_id: dict[str, list[str]] = {}
        self.open_ids: list[tuple[str, int]] = []
        self.texts: list[str] = []
        self.findings: list[dict] = []
        self.scripts: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self._in_script = False
        self.feed(html)
        self.close()

    VOID = {"meta", "br", "col", "img", "input", "link", "hr", "source", "line", "rect"}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "tr" and "finding" in (a.get("class") or "").split():
            self.findings.append(a)
        if tag == "script":
            self._in_script = True
            self.scripts.append("")
        if tag in self.VOID:
            return
        self.stack.append((tag, a))
        if "id" in a:
            self.by_id[a["id"]] = []
            self.open_ids.append((a["id"], len(self.stack)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False
        if tag in self.VOID:
            return
        while self.stack:
            t, _ = self.stack.pop()
            while self.open_ids and self.open_ids[-1][1] > len(self.stack):
                self.open_ids.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
            return
        self.texts.append(data)
        for ident, _ in self.open_ids:
            self.by_id[ident].append(data)

    def text(self, ident: str) -> str:
        return " ".join("".join(self.by_id[ident]).split())


@pytest.fixture(scope="module")
def page(ported):
    return Page((ported[1] / "report.html").read_text(encoding="utf-8"))


def test_html_headline_numbers(ported, page):
    report = ported[0]
    s, est = report["summary"], report["estimate"]
    assert page.text("pct-converted") == f"{s['pct_converted']:g}%"
    assert page.text("estimate-likely") == f"{est['likely']:.1f} h"
    low, high = page.text("estimate-range").removesuffix(" h").split("–")
    assert float(low) == pytest.approx(est["low"], abs=0.05) and float(high) == pytest.approx(est["high"], abs=0.05)
    assert page.text("pct-lines-changed") == f"{s['pct_lines_changed']:g}%"
    assert page.text("findings-total") == str(s["findings"])
    assert "2 errors, 8 warnings, 1 info" in page.text("headline-findings")


def test_html_lists_every_finding(ported, page):
    expected = sorted((f["rule"], f["path"], f["line"]) for f in ported[0]["findings"])
    got = sorted((a["data-rule"], a["data-path"], int(a["data-line"])) for a in page.findings)
    assert got == expected


def test_html_shows_fix_advice_for_each_rule(ported, page):
    for code in ported[0]["rules"]:
        fix = " ".join(REGISTRY[code].section("Fix").replace("`", "").split())
        assert fix in page.text(f"fix-{code}"), code


def test_html_escapes_source_text(ported, page):
    html = (ported[1] / "report.html").read_text(encoding="utf-8")
    assert SCRIPT_TEXT not in html  # never as markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert any(SCRIPT_TEXT in t for t in page.texts)  # but there as text, in the excerpt
    assert len(page.scripts) == 1 and "alert" not in page.scripts[0]


def test_html_excerpt_marks_the_flagged_line(page):
    text = " ".join(page.texts)
    assert "asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));" in text
    assert "__device__ __forceinline__ unsigned lane_id() {" in text  # a line of context


def test_html_is_self_contained(page):
    for tag, attrs in page.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed"), tag
        if tag == "script":
            assert "src" not in attrs
        for name in ("src", "href", "action", "data", "xlink:href", "poster"):
            value = attrs.get(name) or ""
            assert not value or value.startswith("#"), (tag, name, value)
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]


def test_html_rows_cost_no_attribute_lookup_each(ported, monkeypatch):
    """The rows that grow with a tree (findings, their excerpt lines, unsupported APIs) read
    their fields by key: jinja's `row.field` on a dict first tries an attribute, which fails
    with an exception, for every field of every row (cuda-samples' report.html: 43,000 of
    them, a third of its rendering). The same page, no lookup more for more rows."""
    import jinja2

    from hipport.report import html

    calls, real = [0], jinja2.Environment.getattr

    def counting(self, obj, attribute):
        calls[0] += isinstance(obj, dict)  # a row's field as an attribute: an exception first
        return real(self, obj, attribute)

    monkeypatch.setattr(jinja2.Environment, "getattr", counting)
    lookups, pages = [], []
    for times in (1, 2):
        report = dict(ported[0], findings=ported[0]["findings"] * times,
                      unsupported=ported[0]["unsupported"] * times)
        calls[0] = 0
        pages.append(html.render(report, html.Excerpts(PROJECT)))
        lookups.append(calls[0])
    assert ported[0]["findings"] and ported[0]["unsupported"]
    assert pages[1].count('class="finding"') == 2 * pages[0].count('class="finding"') > 0
    assert lookups[1] == lookups[0]


def test_html_has_a_chart_and_sortable_tables(ported, page):
    groups = ported[0]["estimate"]["by_group"]
    rects = [a for t, a in page.tags if t == "rect" and a.get("class") == "bar"]
    assert len(rects) == len(groups) > 3
    widths = [float(a["width"]) for a in rects]
    assert widths == sorted(widths, reverse=True)  # by_group is sorted by likely hours
    assert sum(1 for t, a in page.tags if t == "table" and "sortable" in (a.get("class") or "")) >= 5
    assert "Estimated hours by category" in page.text("chart-title")


def test_html_in_place_excerpts_follow_the_moved_lines(tmp_path):
    """After --in-place, an added #include moves lines down: excerpts find each flagged line by
    its text, and kernels are read from the ported files."""
    from hipport.report.html import Excerpts
    src = tmp_path / "proj"
    shutil.copytree(PROJECT, src)
    rep = tmp_path / "rep"
    assert hipport("port", src, "--in-place", "--report", rep, "-j", "1") == 0
    report = json.loads((rep / "report.json").read_text(encoding="utf-8"))
    excerpts = Excerpts(src, in_place=True)
    excerpts.know(report["files"])
    for f in report["findings"]:
        if f["path"].endswith(".cu") or f["path"].endswith(".cuh"):
            hit = [line for line in excerpts(f["path"], f["line"], f["snippet"]) if line["hit"]][0]["text"].strip()
            # The same line, possibly with its CUDA names rewritten (the mask of __shfl_down_sync).
            assert difflib.SequenceMatcher(None, hit, f["snippet"]).ratio() > 0.8, (hit, f)
    assert [k["name"] for k in report["kernels"]] == ["compute_forces", "kinetic_energy", "integrate"]
    assert "asm volatile" in " ".join(Page((rep / "report.html").read_text(encoding="utf-8")).texts)


def test_an_excerpt_of_a_long_line_shows_the_finding(tmp_path):
    """A minified file's finding lies far past the line's start: the flagged line is shown
    around the finding's column, and a window snippet finds its line."""
    from hipport.findings import CUT
    from hipport.report.html import EXCERPT_WIDTH, Excerpts
    line = "int a; " * 300 + "x = warpSize;" + " int b;" * 300
    (tmp_path / "m.cu").write_text("// head\n" + line + "\n", encoding="utf-8")
    column = line.index("warpSize") + 1
    src = Source(("// head\n" + line + "\n").encode(), "m.cu")
    snippet = src.snippet(2, len("// head\n") + column - 1)
    got = Excerpts(tmp_path)("m.cu", 2, snippet, column)
    hit = [x["text"] for x in got if x["hit"]]
    assert hit and "x = warpSize;" in hit[0] and hit[0].startswith(CUT) and hit[0].endswith(CUT)
    assert len(hit[0]) == EXCERPT_WIDTH
    # One line down (an include added above it), the window still finds its line.
    (tmp_path / "m.cu").write_text("// head\n#include <x>\n" + line + "\n", encoding="utf-8")
    got = Excerpts(tmp_path)("m.cu", 2, snippet, column)
    assert [x["n"] for x in got if x["hit"]] == [3]


def test_excerpts_search_near_a_moved_line(tmp_path):
    from hipport.report.html import Excerpts
    (tmp_path / "a.cu").write_text("// new first line\nint x;\nint y = 32;\nint z;\n", encoding="utf-8")
    got = Excerpts(tmp_path)("a.cu", 2, "int y = 32;")
    assert [(l["n"], l["hit"]) for l in got] == [(1, False), (2, False), (3, True), (4, False)]
    assert Excerpts(tmp_path)("missing.cu", 1) is None


# --- report.md --------------------------------------------------------------------------------

def test_markdown_snapshot(ported, request):
    text = (ported[1] / "report.md").read_text(encoding="utf-8")
    expected = EXPECTED / "nbody_lite.md"
    if request.config.getoption("--update-expected"):
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(text, encoding="utf-8")
    assert expected.exists(), "no snapshot; run pytest --update-expected"
    assert text == expected.read_text(encoding="utf-8")


def test_markdown_escapes_table_cells():
    from hipport.report.markdown import cell, code
    assert cell("a | b <x> `p|q`") == "a \\| b &lt;x&gt; `p\\|q`"
    assert cell("line\nbreak") == "line break"
    assert code("a`b") == "``a`b``"


# --- the kernel finder -------------------------------------------------------------------------

def scan(text: str) -> links.Scan:
    return kern.scan(tools(Settings())[1].lex(text.encode()))


@pytest.mark.parametrize("source, name", [
    ("__global__ void k(int* p) { }", "k"),
    ("template <typename T, int N>\n__global__ void tk(T* p) { }", "tk"),
    ('extern "C" __global__ void ck(float* x) { }', "ck"),
    ("__global__ void __launch_bounds__(256, 2) lb(int n) { }", "lb"),
    ("static __global__ __launch_bounds__(128) void lb2(int n)\n{\n}", "lb2"),
    ("namespace ns { __global__ void inner(const float* __restrict__ x) { } }", "inner"),
    ("__global__ void /* a comment */ commented(int n) { }", "commented"),
])
def test_kernel_definitions(source, name):
    got = scan(source)
    assert [(k.name, k.defined) for k in got.kernels] == [(name, True)]


def test_declarations_macros_and_comments_are_not_definitions():
    got = scan("__global__ void decl(int);\n"
               "#define KERNEL __global__ void\n"
               "#define K2(name) \\\n  __global__ void name(int)\n"
               "// __global__ void in_comment() {}\n"
               'const char* s = "__global__ void in_string() {}";\n')
    assert [(k.name, k.defined, k.line) for k in got.kernels] == [("decl", False, 1)]


def test_launch_sites():
    got = scan("__global__ void k(int);\n"
               "void f(cudaStream_t s) {\n"
               "  k<<<1, 32>>>(0);\n"
               "  ns::k<float, 4><<<g, b, 0, s>>>(1);\n"
               "  hipLaunchKernelGGL(k, dim3(1), dim3(1), 0, 0, 2);\n"
               "  hipLaunchKernelGGL(HIP_KERNEL_NAME(k<int>), dim3(1), dim3(1), 0, 0, 3);\n"
               "  cudaLaunchKernel((const void*)k, 1, 1, args, 0, s);\n"
               "  cudaLaunchCooperativeKernel(reinterpret_cast<void*>(&k), 1, 1, args);\n"
               "  // k<<<1, 1>>>(9);\n"
               "}\n")
    assert [(l.name, l.line, l.syntax) for l in got.launches] == [
        ("k", 3, "<<<>>>"), ("k", 4, "<<<>>>"), ("k", 5, "hipLaunchKernelGGL"),
        ("k", 6, "hipLaunchKernelGGL"), ("k", 7, "launch-api"), ("k", 8, "launch-api")]


def test_link_prefers_the_same_file_and_drops_declarations_of_defined_kernels():
    a = links.Scan((links.Kernel("k", 1, True),), (links.Launch("k", 5, "<<<>>>"),))
    b = links.Scan((links.Kernel("k", 2, True), links.Kernel("other", 9, False)), (links.Launch("k", 7, "<<<>>>"),))
    h = links.Scan((links.Kernel("k", 3, False),), ())
    c = links.Scan((), (links.Launch("k", 4, "<<<>>>"), links.Launch("unknown", 5, "<<<>>>")))
    scans = [("b.cu", b), ("a.cu", a), ("k.h", h), ("c.cu", c)]
    got = links.link(scans)
    assert [(k["path"], k["name"], [(x["path"], x["line"]) for x in k["launches"]]) for k in got] == [
        ("a.cu", "k", [("a.cu", 5), ("c.cu", 4)]),
        ("b.cu", "k", [("b.cu", 7)]),
        ("b.cu", "other", []),
    ]
    # The summary's numbers, counted without the list: the unknown kernel's launch is none.
    assert links.counts(scans) == (3, 3)
    # A record carries the scans as plain tuples; the report reads them as they are.
    plain = [(path, links.Scan(tuple(map(tuple, s.kernels)), tuple(map(tuple, s.launches)))) for path, s in scans]
    assert links.link(plain) == got and links.counts(plain) == (3, 3)


def test_summary_counts_the_kernels_and_launches_the_report_lists():
    """`port` without --report prints a summary that counts kernels without listing them."""
    from hipport.files import file_kind

    results = [port_source(p.read_bytes(), p.relative_to(PROJECT).as_posix(), file_kind(p.name), Settings()).result
               for p in sorted(PROJECT.rglob("*")) if p.is_file()]
    full = model.build(results, Settings(), (6, 3))
    brief = summary_of([r.record() for r in results], Settings())
    assert brief["summary"]["kernels"] == full["summary"]["kernels"] == len(full["kernels"]) > 0
    assert brief["summary"]["kernel_launches"] == full["summary"]["kernel_launches"] \
        == sum(len(k["launches"]) for k in full["kernels"]) > 0
    assert brief["estimate"] == full["estimate"]


def test_no_markers_no_lexing():
    assert kern.scan(tools(Settings())[1].lex(b"int main() { return 0; }\n")) == links.Scan()


# --- what `port` prints -------------------------------------------------------------------------

def test_port_prints_findings_estimate_and_where_the_report_is(ported):
    err = ported[2]
    report = ported[0]
    s = report["summary"]
    assert f"{s['files']} files: {s['changed']} changed" in err
    assert "findings: 2 errors, 8 warnings, 1 info" in err
    assert f"{report['summary']['pct_converted']:g}% of 34 CUDA API references" in err
    assert f"estimated manual work: {report['estimate']['likely']:.1f} h" in err
    assert str(ported[1] / "report.html") in err and "report.json" in err and "report.md" in err


def test_port_without_a_report_prints_the_same_summary(ported, tmp_path, capsys):
    assert hipport("port", PROJECT, "-o", tmp_path / "out", "-j", "1") == 0
    with_report = [line for line in ported[2].splitlines() if not line.startswith("report: ")]
    without = capsys.readouterr().err.splitlines()
    assert [line.split("; output in")[0] for line in without] == [line.split("; output in")[0] for line in with_report]


def test_port_stdout_prints_only_the_ported_text(capsysbinary):
    assert hipport("port", PROJECT / "src" / "forces.cu", "--stdout") == 0
    captured = capsysbinary.readouterr()
    assert b"estimated" not in captured.out + captured.err
    assert captured.out.startswith(b"// Pairwise forces")


def test_port_refuses_a_bad_estimate_table_before_writing(tmp_path, capsysbinary):
    src = tmp_path / "proj"
    shutil.copytree(PROJECT, src)
    (src / ".hipport.toml").write_text("[estimate]\nkernel-hours = [3, 2, 1]\n", encoding="utf-8")
    assert hipport("port", src, "-o", tmp_path / "out") == 2
    assert b"low <= likely <= high" in capsysbinary.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_templates_compile_once_and_a_kept_copy_renders_the_same(ported, tmp_path, monkeypatch):
    import jinja2

    from hipport.report import html, jinja, markdown
    report = ported[0]
    monkeypatch.setattr(jinja, "_HERE", str(tmp_path / "pkg"))  # the copies beside "hipport's bytecode"
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    compiled = []
    compile_template = jinja2.Environment.compile

    def counting(self, source, name=None, *args, **kwargs):
        compiled.append(name)
        return compile_template(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)

    def render() -> tuple[str, str]:
        html.environment.cache_clear()  # as a new process starts
        markdown.environment.cache_clear()
        return html.render(report), markdown.render(report)

    first = render()
    assert sorted(compiled) == ["report.html.j2", "report.md.j2"]
    assert render() == first and len(compiled) == 2  # the kept copies, not compiled again
    kept = list(tmp_path.rglob("template-*"))
    assert [p.parent.name for p in kept] == ["__pycache__"] * 2
    for copy in kept:
        copy.write_bytes(b"damaged")
    assert render() == first and len(compiled) == 4  # compiled anew, and kept again
    assert render() == first and len(compiled) == 4

"""Command line: thin commands that turn options into Settings, make one call, pick an exit code."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from hipport import __version__
from hipport.cache import cache_dir
from hipport.config import load_settings, parse_target
from hipport.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, HipportError
from hipport.words import plural


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hipport")
def cli() -> None:
    """Port CUDA C++ and PyTorch CUDA extensions to AMD HIP/ROCm."""


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "out", type=click.Path(path_type=Path), help="Write the ported tree here (a mirror of the input).")
@click.option("--in-place", is_flag=True, help="Rewrite the files where they are (atomically).")
@click.option("--stdout", "to_stdout", is_flag=True, help="Print the ported text of one file.")
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--report", "report_dir", type=click.Path(path_type=Path), help="Write report.json into this folder.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, help="Processes (default: one per core).")
@click.option("--rename/--keep-names", default=None, help="Rename .cu to .hip and fix the includes that name them.")
@click.option("--launch-syntax", type=click.Choice(["keep", "hip"]), default=None, help="Keep <<<>>> (default) or write hipLaunchKernelGGL.")
@click.option("--target-hip", metavar="X.Y", default=None, help="Emit only APIs that this HIP release has (default: newest known).")
@click.option("--libs", type=click.Choice(["hip", "roc"]), default=None, help="Map libraries to hip* (default) or roc* names.")
@click.option("--experimental", is_flag=True, default=None, help="Also apply mappings HIP marks experimental.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the content-hash cache.")
@click.option("--torch-hipify", type=click.Choice(["v1", "v2"]), default=None,
              help="PyTorch extension spellings: v2 (default, torch >= 2.11) or v1 (torch <= 2.10, Masquerading names).")
def port(paths, out, in_place, to_stdout, diff, report_dir, jobs, rename, launch_syntax, target_hip, libs, experimental,
         no_cache, torch_hipify):
    """Port CUDA sources under PATH... to HIP."""
    from hipport import runner
    from hipport.estimate import load_rates
    from hipport.report import model as report_model

    modes = [m for m, on in ((runner.OUT, out is not None), (runner.IN_PLACE, in_place),
                             (runner.STDOUT, to_stdout), (runner.DIFF, diff)) if on]
    if len(modes) > 1:
        raise HipportError("choose one of -o OUT, --in-place, --stdout, --diff")
    if not modes:
        if len(paths) == 1 and Path(paths[0]).is_file():
            modes = [runner.STDOUT]
        else:
            raise HipportError("say where the result goes: -o OUT, --in-place, --stdout (one file) or --diff")
    mode = modes[0]
    settings = load_settings(
        list(paths), launch_syntax=launch_syntax, libs=libs, experimental=experimental, rename=rename,
        target_hip=parse_target(target_hip) if target_hip else None, jobs=jobs, torch_hipify=torch_hipify,
    )
    # The estimate's rates: a bad [tool.hipport.estimate] table fails here, before any write.
    rates = load_rates(list(paths)) if mode != runner.STDOUT or report_dir is not None else None
    cache_root = None if no_cache else cache_dir()
    root, jobs_list = runner.plan(list(paths), settings, mode, out, cache_root)
    tick, close = runner.stream_progress(len(jobs_list), mode in (runner.OUT, runner.IN_PLACE))
    records = []
    for outcome in runner.run(jobs_list, settings.jobs, tick):
        records.append(outcome.record)
        if mode == runner.STDOUT and outcome.data is not None:
            sys.stdout.buffer.write(outcome.data)
        elif mode == runner.DIFF and outcome.diff:
            sys.stdout.buffer.write(outcome.diff.encode("utf-8", "surrogateescape"))
    close()
    target = runner.target_hip(settings, cache_root)  # also where broken tables fail the run
    in_place = mode == runner.IN_PLACE
    report = None
    if report_dir is not None:
        report = report_model.build(records, settings, target, root=root, in_place=in_place, rates=rates)
        where = report_model.write(report, report_dir, root=root, in_place=in_place)
    elif mode != runner.STDOUT:
        report = report_model.summary(records, settings, root=root, in_place=in_place, rates=rates)
    for r in records:
        if r["status"] in ("failed", "skipped"):
            click.echo(f"{r['source']}: {r['status']}: {r['reason']}", err=True)
    counts = runner.summarize(records)
    if mode != runner.STDOUT:
        line = (f"{plural(counts['files'], 'file')}: {counts['changed']} changed, {counts['replacements']} replacements, "
                f"{counts['skipped']} skipped, {counts['failed']} failed")
        if mode == runner.OUT:
            line += f"; output in {out}"
        click.echo(line, err=True)
        for extra in report_model.summary_lines(report):
            click.echo(extra, err=True)
        if report_dir is not None:
            click.echo(f"report: {where.with_name('report.html')} (data: {where}, Markdown: {where.with_name('report.md')})", err=True)
    sys.exit(EXIT_FINDINGS if counts["failed"] else EXIT_OK)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="Output format.")
@click.option("--select", multiple=True, metavar="CAT,...",
              help="Only these categories, rule codes or rule names (comma list, repeatable).")
@click.option("--ignore", multiple=True, metavar="CAT,...",
              help="Skip these categories, rule codes or rule names (comma list, repeatable).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Exit 1 when a finding has this severity or a higher one (default: warning; "
                   "info findings alone exit 0).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False),
              help="Report only findings that are not in this baseline file.")
@click.option("--write-baseline", type=click.Path(path_type=Path, dir_okay=False),
              help="Write every current finding to this baseline file and exit 0.")
@click.option("--target-hip", metavar="X.Y", default=None, help="Check against this HIP release (default: newest known).")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the report to this file instead of standard output.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, help="Processes (default: one per core).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the content-hash cache.")
def check(paths, fmt, select, ignore, fail_on, exit_zero, baseline, write_baseline, target_hip, output, jobs,
          no_cache):
    """Report what needs manual work to run on HIP, as findings.

    Exit status: 0 when no finding is at or above the fail level (--fail-on, default warning),
    1 when one is, 2 for a usage, configuration or I/O error (or a file that could not be
    checked). Suppress a finding with `// hipport: ignore[CATEGORY-or-CODE] reason` on its line
    or the line above, or `// hipport: ignore-file[...]` anywhere in the file (`#` comments in
    build files and Python); `ignore` without brackets suppresses every rule.
    """
    from hipport import check as engine
    from hipport import suppress
    from hipport.emit import write_atomic
    from hipport.report.formats import FORMATTERS

    paths = list(paths)
    settings = load_settings(paths, target_hip=parse_target(target_hip) if target_hip else None, jobs=jobs)
    options = engine.load_options(paths, select=engine.split_names(select), ignore=engine.split_names(ignore),
                                  fail_on=fail_on, exit_zero=exit_zero)
    use_baseline = None if write_baseline is not None else baseline
    result = engine.run_check(paths, settings, options, baseline=use_baseline,
                              cache_root=None if no_cache else cache_dir())
    for note in result.notes:
        click.echo(note, err=True)
    if write_baseline is not None:
        write_atomic(write_baseline, suppress.dump_baseline(result.findings))
        click.echo(f"hipport: wrote {len(result.findings)} findings to the baseline {write_baseline}", err=True)
        sys.exit(EXIT_USAGE if result.failed else EXIT_OK)
    text = FORMATTERS[fmt](result)
    if output is not None:
        write_atomic(output, text.encode("utf-8"))
    else:
        click.echo(text, nl=False)
    sys.exit(engine.exit_code(result, options))


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="text: the estimate explained; json: report.json; markdown: report.md.")
@click.option("--calibrate", type=click.Path(path_type=Path, dir_okay=False), metavar="CSV",
              help="Fit the rates to past ports: a CSV with `hours` and counts (references, trivial, low, "
                   "medium, high, kernels, build_files), by non-negative least squares.")
@click.option("--target-hip", metavar="X.Y", default=None, help="Estimate for this HIP release (default: newest known).")
@click.option("--libs", type=click.Choice(["hip", "roc"]), default=None, help="Map libraries to hip* (default) or roc* names.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the estimate to this file instead of standard output.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=None, help="Processes (default: one per core).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the content-hash cache (port's).")
def estimate(paths, fmt, calibrate, target_hip, libs, output, jobs, no_cache):
    """Estimate the manual work a port of PATH... leaves, in hours with a range, line by line.

    Nothing is written (except -o). Rates come from [tool.hipport.estimate] (see the README) or
    from --calibrate; the text output prints every rate and assumption it used.
    """
    from hipport import estimate as est
    from hipport.emit import write_atomic
    from hipport.report import markdown
    from hipport.report import model as report_model

    paths = list(paths)
    settings = load_settings(paths, libs=libs, target_hip=parse_target(target_hip) if target_hip else None, jobs=jobs)
    rates = est.load_rates(paths)
    notes: list[str] = []
    if calibrate is not None:
        try:
            table = calibrate.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise HipportError(f"{calibrate}: cannot read the calibration file: {exc}") from None
        fit = est.calibrate(table, rates, str(calibrate))
        rates = fit.rates
        notes = fit.lines() + ["To keep these rates, put this in pyproject.toml or .hipport.toml:", "",
                               est.toml_snippet(rates)]
    report = report_model.from_paths(paths, settings, rates, cache_root=None if no_cache else cache_dir())
    render = {"text": est.format_text, "json": report_model.to_json, "markdown": markdown.render}[fmt]
    text = render(report)
    if notes and fmt == "text":
        text = "\n".join(notes) + "\n" + text
    elif notes:
        click.echo("\n".join(notes), err=True)
    if output is not None:
        write_atomic(output, text.encode("utf-8"))
    else:
        click.echo(text, nl=False)
    sys.exit(EXIT_OK)


@cli.command()
@click.argument("key", required=False)
@click.option("--mappings", is_flag=True, help="Count the CUDA names the mapping tables support, per library.")
@click.option("--target-hip", metavar="X.Y", default=None, help="With --mappings: count for this HIP release.")
@click.option("--libs", type=click.Choice(["hip", "roc"]), default="hip", show_default=True,
              help="With --mappings: hip* or roc* library names.")
def rules(key, mappings, target_hip, libs):
    """List the rules, or explain the ones matching KEY (a code, a rule name or a category)."""
    from hipport.rules import CATEGORY_CODES, all_rules, find

    if mappings:
        from hipport.mappings import library_counts, load

        table = load(target_hip=parse_target(target_hip) if target_hip else None, libs=libs)
        counts = library_counts(table)
        width = max([len("library")] + [len(k) for k in counts])
        click.echo(f"mapping tables for HIP {table.target_hip[0]}.{table.target_hip[1]} (--libs {libs})")
        click.echo(f"{'library':<{width}}  {'supported':>9}  {'unsupported':>11}")
        for lib, c in sorted(counts.items()):
            click.echo(f"{lib:<{width}}  {c['supported']:>9}  {c['unsupported']:>11}")
        supported = sum(c["supported"] for c in counts.values())
        click.echo(f"{supported} CUDA names supported ({len(table.names)} renamed)")
        return
    if key:
        found = find(key)
        if not found and key in CATEGORY_CODES:
            click.echo(f"{key}: no rules in this category yet")
            return
        if not found:
            raise HipportError(f"no rule, rule name or category {key!r} (`hipport rules` lists them)")
        for i, r in enumerate(found):
            if i:
                click.echo()
            click.echo(f"{r.code} {r.name}")
            click.echo(f"category: {r.category}, severity: {r.severity}, effort: {r.effort}")
            click.echo()
            click.echo(r.doc)
        return
    listed = all_rules()
    wcode = max([len(r.code) for r in listed] or [0])
    wname = max([len(r.name) for r in listed] or [0])
    first = True
    for category in CATEGORY_CODES:
        in_cat = [r for r in listed if r.category == category]
        if not in_cat:
            continue
        if not first:
            click.echo()
        first = False
        click.echo(category)
        for r in in_cat:
            click.echo(f"  {r.code:<{wcode}}  {r.name:<{wname}}  {r.severity:<7}  effort: {r.effort}")


@cli.command()
@click.argument("out", type=click.Path(path_type=Path, exists=True))
@click.option("--offload-arch", default="gfx90a", show_default=True, metavar="GFX",
              help="The AMD target to compile for (Debian's HIP 5.2 accepts up to gfx90a).")
@click.option("-I", "--include", "includes", multiple=True, type=click.Path(path_type=Path, file_okay=False),
              help="An include folder, besides those the build files name (repeatable).")
@click.option("-D", "--define", "defines", multiple=True, metavar="NAME[=VALUE]", help="A macro definition (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, help="Parallel compiles (default: one per core).")
@click.option("--headers", is_flag=True, help="Also compile each header (.cuh, .h, .hpp) on its own.")
@click.option("--strict", is_flag=True, help="A library header that is not installed counts as a failure.")
@click.option("--hipcc", "hipcc_path", type=click.Path(path_type=Path, dir_okay=False),
              help="The hipcc to use (default: $HIPPORT_HIPCC, PATH, /usr/bin, /opt/rocm/bin).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def verify(out, offload_arch, includes, defines, jobs, headers, strict, hipcc_path, fmt):
    """Compile every ported translation unit under OUT with hipcc (syntax check, HIP_PLATFORM=amd).

    Prints OK, FAIL (with the first error) or MISSING (a library header not installed for this
    hipcc) per file. Exit status: 0 when nothing failed, 1 when a file failed (or, with --strict,
    lacked a header), 2 when hipcc is not installed or OUT does not exist.
    """
    from hipport import verify as engine

    opts = engine.Options(offload_arch=offload_arch, include_dirs=tuple(p.resolve() for p in includes),
                          defines=tuple(defines), jobs=jobs, headers=headers, strict=strict,
                          hipcc=str(hipcc_path) if hipcc_path else None)
    hipcc = engine.find_hipcc(opts.hipcc)
    if hipcc is None:
        raise HipportError(engine.INSTALL_HINT)
    version = engine.hipcc_version(hipcc, offload_arch)
    outcomes = engine.verify(out, opts)
    if fmt == "json":
        click.echo(engine.format_json(outcomes, hipcc, version, opts), nl=False)
    else:
        head = (f"hipport verify: {hipcc}" + (f" (HIP {version})" if version else "")
                + f", --offload-arch={offload_arch}, {len(outcomes)} files")
        click.echo(engine.format_text(outcomes, head), nl=False)
    sys.exit(EXIT_FINDINGS if engine.failed(outcomes, strict) else EXIT_OK)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="hipport", standalone_mode=False)
    except BrokenPipeError:
        # The reader went away (`hipport port --diff x | head`): not an error of ours.
        sys.stderr.close()
        os._exit(0)
    except click.exceptions.Abort:
        click.echo("hipport: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except HipportError as exc:
        click.echo(f"hipport: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:
        click.echo(f"hipport: error: {exc}", err=True)
        sys.exit(2)

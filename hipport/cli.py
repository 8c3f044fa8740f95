"""Command line: thin commands that turn options into Settings, make one call, pick an exit code.

Built on argparse rather than a CLI framework: a pre-commit hook starts hipport on every
commit, and the framework's import alone took a quarter of a cached `check`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from hipport import __version__
from hipport.locations import cache_dir
from hipport.config import load_settings, parse_target
from hipport.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, HipportError
from hipport.words import plural


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """Write to stdout (or stderr) and flush; a character the stream cannot encode is written
    as its escape (as emit.text_bytes writes it) rather than fatal."""
    stream = sys.stderr if err else sys.stdout
    text += "\n" if nl else ""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        stream.flush()
        stream.buffer.write(text.encode(stream.encoding or "utf-8", "backslashreplace"))
    stream.flush()


def put(text: str | Iterable[str], output: Path | None) -> None:
    """A command's output (its text, or the text's pieces in order) to the file `output`,
    written atomically, or to stdout; in batches, so a document in pieces is never whole."""
    from hipport.emit import batches, write_text

    if output is not None:
        write_text(output, text)
        return
    for batch in batches(text):
        echo(batch, nl=False)


# --------------------------------------------------------------------------------------------
# the commands


def port(args: argparse.Namespace) -> None:
    """Port CUDA sources under PATH... to HIP."""
    from hipport import runner
    from hipport.estimate import load_rates
    from hipport.report import model as report_model

    paths, out, report_dir = args.paths, args.out, args.report
    modes = [m for m, on in ((runner.OUT, out is not None), (runner.IN_PLACE, args.in_place),
                             (runner.STDOUT, args.stdout), (runner.DIFF, args.diff)) if on]
    if len(modes) > 1:
        raise HipportError("choose one of -o OUT, --in-place, --stdout, --diff")
    if not modes:
        if len(paths) == 1 and Path(paths[0]).is_file():
            modes = [runner.STDOUT]
        else:
            raise HipportError("say where the result goes: -o OUT, --in-place, --stdout (one file) or --diff")
    mode = modes[0]
    settings = load_settings(
        list(paths), launch_syntax=args.launch_syntax, libs=args.libs, experimental=args.experimental,
        rename=args.rename, target_hip=_target(args), jobs=args.jobs, torch_hipify=args.torch_hipify,
    )
    # The estimate's rates: a bad [tool.hipport.estimate] table fails here, before any write.
    rates = load_rates(list(paths)) if mode != runner.STDOUT or report_dir is not None else None
    cache_root = None if args.no_cache else cache_dir()
    root, jobs_list = runner.plan(list(paths), settings, mode, out, cache_root)
    tick, close = runner.stream_progress(len(jobs_list), mode in (runner.OUT, runner.IN_PLACE))
    in_place = mode == runner.IN_PLACE
    # The report, or its totals alone, taken as the records come; no record is kept.
    taker = (report_model.Report(settings, root, in_place, rates, cache_root) if report_dir is not None
             else report_model.Totals(settings, root, in_place, rates))
    totals = taker.totals if isinstance(taker, report_model.Report) else taker
    troubles = []  # the files that failed or were skipped
    for outcome in runner.run(jobs_list, settings.jobs, tick):
        record = outcome.record
        taker.add(record, outcome.stamp)
        if record["status"] in ("failed", "skipped"):
            troubles.append(f"{record['source']}: {record['status']}: {record['reason']}")
        if mode == runner.STDOUT and outcome.data is not None:
            sys.stdout.buffer.write(outcome.data)
        elif mode == runner.DIFF and outcome.diff:
            sys.stdout.buffer.write(outcome.diff.encode("utf-8", "surrogateescape"))
    close()
    target = runner.target_hip(settings, cache_root)  # also where broken tables fail the run
    report = None
    if isinstance(taker, report_model.Report):
        where, report = report_model.write_new(taker, report_dir, target)
    elif mode != runner.STDOUT:
        report = taker.summary()
    for line in troubles:
        echo(line, err=True)
    failed = totals.by_status["failed"]
    if mode != runner.STDOUT:
        line = (f"{plural(totals.files, 'file')}: {totals.changed} changed, {sum(totals.by_library.values())} "
                f"replacements, {totals.by_status['skipped']} skipped, {failed} failed")
        if mode == runner.OUT:
            line += f"; output in {out}"
        echo(line, err=True)
        for extra in report_model.summary_lines(report):
            echo(extra, err=True)
        if report_dir is not None:
            echo(f"report: {where.with_name('report.html')} (data: {where}, Markdown: {where.with_name('report.md')})", err=True)
    sys.exit(EXIT_FINDINGS if failed else EXIT_OK)


def check(args: argparse.Namespace) -> None:
    """Report what needs manual work to run on HIP, as findings.

    Exit status: 0 when no finding is at or above the fail level (--fail-on, default warning),
    1 when one is, 2 for a usage, configuration or I/O error (or a file that could not be
    checked). Suppress a finding with `// hipport: ignore[CATEGORY-or-CODE] reason` on its line
    or the line above, or `// hipport: ignore-file[...]` anywhere in the file (`#` comments in
    build files and Python); `ignore` without brackets suppresses every rule.
    """
    from hipport import check as engine
    from hipport import suppress
    from hipport.report.formats import FORMATTERS

    paths = list(args.paths)
    settings = load_settings(paths, target_hip=_target(args), jobs=args.jobs)
    options = engine.load_options(paths, select=engine.split_names(args.select),
                                  ignore=engine.split_names(args.ignore), fail_on=args.fail_on,
                                  exit_zero=args.exit_zero)
    write_baseline = args.write_baseline
    use_baseline = None if write_baseline is not None else args.baseline
    # The findings are written as the files are checked; what they add up to comes after them.
    result = engine.stream_check(paths, settings, options, baseline=use_baseline,
                                 cache_root=None if args.no_cache else cache_dir())
    if write_baseline is not None:
        put(suppress.dump_baseline(result.findings), write_baseline)
    else:
        put(FORMATTERS[args.format](result), args.output)
    for note in result.notes:
        echo(note, err=True)
    if write_baseline is not None:
        echo(f"hipport: wrote {sum(result.severities.values())} findings to the baseline {write_baseline}", err=True)
        sys.exit(EXIT_USAGE if result.failed else EXIT_OK)
    sys.exit(engine.exit_code(result, options))


def estimate(args: argparse.Namespace) -> None:
    """Estimate the manual work a port of PATH... leaves, in hours with a range, line by line.

    Nothing is written (except -o). Rates come from [tool.hipport.estimate] (see the README) or
    from --calibrate; the text output prints every rate and assumption it used.
    """
    from hipport import estimate as est
    from hipport.report import model as report_model

    paths = list(args.paths)
    settings = load_settings(paths, libs=args.libs, target_hip=_target(args), jobs=args.jobs)
    rates = est.load_rates(paths)
    notes: list[str] = []
    calibrate = args.calibrate
    if calibrate is not None:
        try:
            table = calibrate.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise HipportError(f"{calibrate}: cannot read the calibration file: {exc}") from None
        fit = est.calibrate(table, rates, str(calibrate))
        rates = fit.rates
        notes = fit.lines() + ["To keep these rates, put this in pyproject.toml or .hipport.toml:", "",
                               est.toml_snippet(rates)]
    report = report_model.from_paths(paths, settings, rates, cache_root=None if args.no_cache else cache_dir())
    if args.format == "markdown":
        from hipport.report import markdown  # jinja2: 25 ms that text and JSON do without

        render = markdown.render
    else:
        render = {"text": est.format_text, "json": report_model.json_pieces}[args.format]
    text = render(report)
    if notes and args.format == "text":
        text = "\n".join(notes) + "\n" + text
    elif notes:
        echo("\n".join(notes), err=True)
    put(text, args.output)
    sys.exit(EXIT_OK)


def rules(args: argparse.Namespace) -> None:
    """List the rules, or explain the ones matching KEY (a code, a rule name or a category)."""
    from hipport.rules import CATEGORY_CODES, all_rules, find

    key = args.key
    if args.mappings:
        from hipport.mappings import library_counts, load

        table = load(target_hip=_target(args), libs=args.libs)
        counts = library_counts(table)
        width = max([len("library")] + [len(k) for k in counts])
        echo(f"mapping tables for HIP {table.target_hip[0]}.{table.target_hip[1]} (--libs {args.libs})")
        echo(f"{'library':<{width}}  {'supported':>9}  {'unsupported':>11}")
        for lib, c in sorted(counts.items()):
            echo(f"{lib:<{width}}  {c['supported']:>9}  {c['unsupported']:>11}")
        supported = sum(c["supported"] for c in counts.values())
        echo(f"{supported} CUDA names supported ({len(table.names)} renamed)")
        return
    if key:
        found = find(key)
        if not found and key in CATEGORY_CODES:
            echo(f"{key}: no rules in this category yet")
            return
        if not found:
            raise HipportError(f"no rule, rule name or category {key!r} (`hipport rules` lists them)")
        for i, r in enumerate(found):
            if i:
                echo()
            echo(f"{r.code} {r.name}")
            echo(f"category: {r.category}, severity: {r.severity}, effort: {r.effort}")
            echo()
            echo(r.doc)
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
            echo()
        first = False
        echo(category)
        for r in in_cat:
            echo(f"  {r.code:<{wcode}}  {r.name:<{wname}}  {r.severity:<7}  effort: {r.effort}")


def verify(args: argparse.Namespace) -> None:
    """Compile every ported translation unit under OUT with hipcc (syntax check, HIP_PLATFORM=amd).

    Prints OK, FAIL (with the first error) or MISSING (a library header not installed for this
    hipcc) per file. Exit status: 0 when nothing failed, 1 when a file failed (or, with --strict,
    lacked a header), 2 when hipcc is not installed or OUT does not exist.
    """
    from hipport import verify as engine

    offload_arch = args.offload_arch
    opts = engine.Options(offload_arch=offload_arch, include_dirs=tuple(p.resolve() for p in args.include),
                          defines=tuple(args.define), jobs=args.jobs, headers=args.headers, strict=args.strict,
                          hipcc=str(args.hipcc) if args.hipcc else None)
    hipcc = engine.find_hipcc(opts.hipcc)
    if hipcc is None:
        raise HipportError(engine.INSTALL_HINT)
    version = engine.hipcc_version(hipcc, offload_arch)
    outcomes = engine.verify(args.out, opts)
    if args.format == "json":
        echo(engine.format_json(outcomes, hipcc, version, opts), nl=False)
    else:
        head = (f"hipport verify: {hipcc}" + (f" (HIP {version})" if version else "")
                + f", --offload-arch={offload_arch}, {len(outcomes)} files")
        echo(engine.format_text(outcomes, head), nl=False)
    sys.exit(EXIT_FINDINGS if engine.failed(outcomes, args.strict) else EXIT_OK)


def _target(args: argparse.Namespace) -> tuple[int, int] | None:
    return parse_target(args.target_hip) if args.target_hip else None


# --------------------------------------------------------------------------------------------
# the options


class _Help(argparse.RawDescriptionHelpFormatter):
    """Docstrings as written (paragraphs kept), and `Usage:` as the other tools spell it."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        # shutil.get_terminal_size's answer, without importing shutil on every run (argparse
        # makes a formatter for each option it adds)
        if width is None:
            try:
                columns = int(os.environ.get("COLUMNS", "0"))
            except ValueError:
                columns = 0
            if columns <= 0:
                try:
                    columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
                except (AttributeError, ValueError, OSError):
                    columns = 80
            width = (columns or 80) - 2
        super().__init__(prog, indent_increment, max_help_position, width)

    def add_usage(self, usage, actions, groups, prefix=None):
        return super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)

    def _format_action(self, action):
        text = super()._format_action(action)
        if action.nargs == argparse.PARSER:  # the commands, without a bare `COMMAND` line above
            text = text.split("\n", 1)[1]
        return text


class _Parser(argparse.ArgumentParser):
    """A usage error: the short usage line, where help is, and what was wrong (exit status 2)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, formatter_class=_Help, allow_abbrev=False, add_help=False, **kwargs)
        self.add_argument("-h", "--help", action="help", help="Show this message and exit.")

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"Try '{self.prog} --help' for help.\n\n{self.prog}: error: {message}\n")


class _Version(argparse.Action):
    """`--version`: the version, and whether the C scanner was built (as black says whether
    it was compiled), told only when asked: the lexer is not imported for every parse."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from hipport.parse.lexer import scanner_state  # noqa: PLC0415 - for --version alone

        echo(f"hipport, version {__version__} ({scanner_state()})")
        parser.exit()


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is below 0 (0 means one process per CPU)")
    return n


def _file(text: str) -> Path:
    """A file that may not exist yet, but is not a folder."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    return Path(text)


def _folder(text: str) -> Path:
    if os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
    return Path(text)


def _existing(text: str) -> Path:
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"{text!r} does not exist")
    return Path(text)


def _command(subparsers, func, operands: str) -> argparse.ArgumentParser:
    doc = func.__doc__ or ""
    p = subparsers.add_parser(func.__name__, help=doc.splitlines()[0], description=doc.strip(),
                              prog=f"hipport {func.__name__}", usage=f"%(prog)s [OPTIONS] {operands}")
    p.set_defaults(func=func, parser=p)
    return p


def _jobs_option(p: argparse.ArgumentParser, default: int | None = None,
                 help: str = "Processes (default: one per CPU this process may use: its affinity "
                             "and its container's CPU quota).") -> None:
    p.add_argument("-j", "--jobs", type=_jobs, default=default, metavar="N", help=help)


def _target_option(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--target-hip", metavar="X.Y", help=help)


def _libs_option(p: argparse.ArgumentParser, default: str | None = None) -> None:
    p.add_argument("--libs", choices=["hip", "roc"], default=default,
                   help="Map libraries to hip* (default) or roc* names.")


def _no_cache_option(p: argparse.ArgumentParser, what: str = "") -> None:
    p.add_argument("--no-cache", action="store_true", help=f"Do not read or write the content-hash cache{what}.")


def _port_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="Files and folders to port.")
    p.add_argument("-o", "--output", dest="out", type=Path, metavar="OUT", help="Write the ported tree here (a mirror of the input).")
    p.add_argument("--in-place", action="store_true", help="Rewrite the files where they are (atomically).")
    p.add_argument("--stdout", action="store_true", help="Print the ported text of one file.")
    p.add_argument("--diff", action="store_true", help="Print a unified diff; write nothing.")
    p.add_argument("--report", type=Path, metavar="DIR", help="Write report.json into this folder.")
    _jobs_option(p)
    p.add_argument("--rename", dest="rename", action="store_const", const=True, default=None,
                   help="Rename .cu to .hip and fix the includes that name them.")
    p.add_argument("--keep-names", dest="rename", action="store_const", const=False,
                   help="Keep the .cu names (the default).")
    p.add_argument("--launch-syntax", choices=["keep", "hip"], help="Keep <<<>>> (default) or write hipLaunchKernelGGL.")
    _target_option(p, "Emit only APIs that this HIP release has (default: newest known).")
    _libs_option(p)
    p.add_argument("--experimental", action="store_const", const=True, default=None,
                   help="Also apply mappings HIP marks experimental.")
    _no_cache_option(p)
    p.add_argument("--torch-hipify", choices=["v1", "v2"],
                   help="PyTorch extension spellings: v2 (default, torch >= 2.11) or v1 (torch <= 2.10, Masquerading names).")


def _check_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="Files and folders to check.")
    p.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text",
                   help="Output format (default: text).")
    p.add_argument("--select", action="append", default=[], metavar="CAT,...",
                   help="Only these categories, rule codes or rule names (comma list, repeatable).")
    p.add_argument("--ignore", action="append", default=[], metavar="CAT,...",
                   help="Skip these categories, rule codes or rule names (comma list, repeatable).")
    p.add_argument("--fail-on", choices=["error", "warning", "info"],
                   help="Exit 1 when a finding has this severity or a higher one (default: warning; "
                        "info findings alone exit 0).")
    p.add_argument("--exit-zero", action="store_true", help="Exit 0 even when there are findings.")
    p.add_argument("--baseline", type=_file, metavar="FILE", help="Report only findings that are not in this baseline file.")
    p.add_argument("--write-baseline", type=_file, metavar="FILE",
                   help="Write every current finding to this baseline file and exit 0.")
    _target_option(p, "Check against this HIP release (default: newest known).")
    p.add_argument("-o", "--output", type=_file, metavar="FILE", help="Write the report to this file instead of standard output.")
    _jobs_option(p)
    _no_cache_option(p)


def _estimate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="Files and folders a port would cover.")
    p.add_argument("--format", choices=["text", "json", "markdown"], default="text",
                   help="text: the estimate explained; json: report.json; markdown: report.md (default: text).")
    p.add_argument("--calibrate", type=_file, metavar="CSV",
                   help="Fit the rates to past ports: a CSV with `hours` and counts (references, trivial, low, "
                        "medium, high, kernels, build_files), by non-negative least squares.")
    _target_option(p, "Estimate for this HIP release (default: newest known).")
    _libs_option(p)
    p.add_argument("-o", "--output", type=_file, metavar="FILE", help="Write the estimate to this file instead of standard output.")
    _jobs_option(p)
    _no_cache_option(p, " (port's)")


def _rules_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("key", nargs="?", metavar="KEY", help="A rule code, rule name or category.")
    p.add_argument("--mappings", action="store_true", help="Count the CUDA names the mapping tables support, per library.")
    _target_option(p, "With --mappings: count for this HIP release.")
    p.add_argument("--libs", choices=["hip", "roc"], default="hip", help="With --mappings: hip* or roc* library names (default: hip).")


def _verify_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=_existing, metavar="OUT", help="The ported tree (hipport port's -o folder).")
    p.add_argument("--offload-arch", default="gfx90a", metavar="GFX",
                   help="The AMD target to compile for (Debian's HIP 5.2 accepts up to gfx90a; default: gfx90a).")
    p.add_argument("-I", "--include", action="append", default=[], type=_folder, metavar="DIR",
                   help="An include folder, besides those the build files name (repeatable).")
    p.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="A macro definition (repeatable).")
    _jobs_option(p, 0, "Parallel compiles (default: one per CPU this process may use).")
    p.add_argument("--headers", action="store_true", help="Also compile each header (.cuh, .h, .hpp) on its own.")
    p.add_argument("--strict", action="store_true", help="A library header that is not installed counts as a failure.")
    p.add_argument("--hipcc", type=_file, metavar="PATH",
                   help="The hipcc to use (default: $HIPPORT_HIPCC, PATH, /usr/bin, /opt/rocm/bin).")
    p.add_argument("--format", choices=["text", "json"], default="text", help="Output format (default: text).")


# The commands, their operands and their options: only the command being run gets its options
# built (argparse takes milliseconds a command, and a pre-commit hook runs `check` each time).
COMMANDS = (
    (port, "PATH...", _port_options),
    (check, "PATH...", _check_options),
    (estimate, "PATH...", _estimate_options),
    (rules, "[KEY]", _rules_options),
    (verify, "OUT", _verify_options),
)


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only` (a command's name), that command alone (each
    command's parser costs a run about half a millisecond, more where gettext looks for
    translations): the top-level help, which lists them all, needs `only` None."""
    top = _Parser(prog="hipport", usage="%(prog)s [OPTIONS] COMMAND [ARGS]...",
                  description="Port CUDA C++ and PyTorch CUDA extensions to AMD HIP/ROCm.")
    top.add_argument("--version", action=_Version, help="Show the version and exit.")
    sub = top.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    for func, operands, options in COMMANDS:
        if only is None or only == func.__name__:
            options(_command(sub, func, operands))
    return top


def main(argv: list[str] | None = None) -> None:
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with it closed (`hipport rules >&-`): what goes
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # there is lost, as print() loses it
    args_given = sys.argv[1:] if argv is None else argv
    # A command first: its parser alone. Anything else (a top-level option such as --help, an
    # unknown command, none) gets every command's.
    first = args_given[0] if args_given else None
    top = parser(first if first in {func.__name__ for func, _, _ in COMMANDS} else None)
    try:
        args, extra = top.parse_known_args(argv)
        if not hasattr(args, "func"):
            top.print_help(sys.stderr)  # no command: what there is, and a usage error's status
            sys.exit(EXIT_USAGE)
        if extra:  # said by the command's parser, whose usage it is
            args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
        try:
            args.func(args)
        finally:
            # patterns of modules imported after loading (build-file rewriters); a run served
            # from the cache never imported the module, nor compiled a pattern through it
            stored = sys.modules.get("hipport.regexes")
            if stored is not None:
                stored.save()
    except BrokenPipeError:
        # The reader went away (`hipport port --diff x | head`): not an error of ours.
        sys.stderr.close()
        os._exit(0)
    except KeyboardInterrupt:
        echo("hipport: interrupted", err=True)
        sys.exit(130)
    except HipportError as exc:
        echo(f"hipport: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:
        echo(f"hipport: error: {exc}", err=True)
        sys.exit(2)

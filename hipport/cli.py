"""Command line: thin commands that turn options into Settings, make one call, pick an exit code."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hipport import __version__
from hipport.config import load_settings, parse_target
from hipport.errors import EXIT_FINDINGS, EXIT_OK, HipportError
from hipport.report import model as report_model


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
def port(paths, out, in_place, to_stdout, diff, report_dir, jobs, rename, launch_syntax, target_hip, libs, experimental):
    """Port CUDA sources under PATH... to HIP."""
    from hipport import runner

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
        target_hip=parse_target(target_hip) if target_hip else None, jobs=jobs,
    )
    _, jobs_list = runner.plan(list(paths), settings, mode, out)
    tick, close = runner.stream_progress(len(jobs_list), mode in (runner.OUT, runner.IN_PLACE))
    results = []
    for outcome in runner.run(jobs_list, settings.jobs, tick):
        results.append(outcome.result)
        if mode == runner.STDOUT and outcome.data is not None:
            sys.stdout.buffer.write(outcome.data)
        elif mode == runner.DIFF and outcome.diff:
            sys.stdout.buffer.write(outcome.diff.encode("utf-8", "surrogateescape"))
    close()
    mappings, _ = runner.tools(settings)
    if report_dir is not None:
        where = report_model.write(report_model.build(results, settings, mappings.target_hip), report_dir)
    for r in results:
        if r.status in ("failed", "skipped"):
            click.echo(f"{r.source}: {r.status}: {r.reason}", err=True)
    counts = runner.summarize(results)
    if mode != runner.STDOUT:
        line = (f"{counts['files']} files: {counts['changed']} changed, {counts['replacements']} replacements, "
                f"{counts['skipped']} skipped, {counts['failed']} failed")
        if mode == runner.OUT:
            line += f"; output in {out}"
        if report_dir is not None:
            line += f"; report: {where}"
        click.echo(line, err=True)
    sys.exit(EXIT_FINDINGS if counts["failed"] else EXIT_OK)


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="hipport", standalone_mode=False)
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

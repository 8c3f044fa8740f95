"""The `hipport` command: the console script and `python -m hipport` both start here, so that
the collector's pace is set before the command line's imports (hipport.collector)."""

import os
import sys

from hipport import collector

collector.relax()

from hipport.cli import main as run_command  # noqa: E402 - after relax(): the imports are what it speeds up


def main() -> None:
    """Run the command, then leave without tearing the interpreter down. Freeing every module,
    table and rule one by one takes 10 to 15 ms, a tenth of a run served from the cache, and
    writes nothing: once the cache's connections are closed (SQLite folds its log into the
    file) and the output is flushed, nothing is left to do. An exception other than
    SystemExit leaves the usual way, with its traceback."""
    try:
        run_command()
        code = 0
    except SystemExit as exc:
        code = exc.code
    leave(code)


def leave(code: object) -> None:
    """Exit with `code` as sys.exit(code) would: None is 0, and anything but an int is printed
    to stderr and exits 1."""
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    cache = sys.modules.get("hipport.cache")  # a run that never opened the cache never imported it
    if cache is not None:
        cache.close_stores()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken stream: the interpreter reports it as it does
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    main()

"""The `hipport` command: the console script and `python -m hipport` both start here, so that
the collector's pace is set before the command line's imports (hipport.collector)."""

from hipport import collector

collector.relax()

from hipport.cli import main  # noqa: E402 - after relax(): the imports are what it speeds up

if __name__ == "__main__":
    main()

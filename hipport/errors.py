"""Errors that stop a command. Per-file problems are FileResult statuses, never exceptions."""

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class HipportError(Exception):
    """A usage, configuration or I/O problem: the command stops with exit code 2."""

    exit_code = EXIT_USAGE


class MappingError(HipportError):
    """A mapping table is malformed."""


class UsageError(HipportError):
    """The command line asks for something impossible (OUT inside the input, ...)."""

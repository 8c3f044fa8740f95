"""Helpers shared by tests: run the CLI in-process, and register throwaway rules."""

from __future__ import annotations

from hipport.cli import main
from hipport.rules import CATEGORY_CODES, REGISTRY

# A complete rule doc for rules that tests register for themselves.
TEST_RULE_DOC = """
    What it does:
        Test rule.

    Why it matters on AMD GPUs:
        Test rule.

    Example:
        x % 32

    Fix:
        Nothing.
    """


def hipport(*args) -> int:
    """Run the CLI in-process; return its exit code."""
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def free_code(category: str) -> str:
    """The highest unused code in a category's block (real rules count up from the bottom)."""
    base = CATEGORY_CODES[category]
    top = min([v for v in CATEGORY_CODES.values() if v > base], default=base + 50)
    for n in range(top - 1, base, -1):
        if f"HP{n}" not in REGISTRY:
            return f"HP{n}"
    raise AssertionError(f"no free code in {category}")

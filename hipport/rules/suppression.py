"""hipport's own category: problems with the suppression comments themselves.

The engine (hipport.suppress, applied by hipport.check) produces these findings: whether a
suppression was used is only known after every other rule has run on the file, so the rule's
check function yields nothing. It is registered so that it has a code, a doc, a severity, and
can be selected or ignored like any other rule.
"""

from __future__ import annotations

from hipport.rules import UNUSED_SUPPRESSION, rule

# Every file kind a suppression comment can sit in.
ALL_KINDS = ("cuda", "cpp", "cmake", "make", "setup.py", "python", "docker", "requirements", "pyproject")


@rule(code=UNUSED_SUPPRESSION, name="unused-suppression", category="suppression", severity="info",
      effort="trivial", kinds=ALL_KINDS)
def unused_suppression(ctx):
    """
    What it does:
        Reports a `hipport: ignore[...]` or `hipport: ignore-file[...]` comment that
        suppressed nothing in this run: no finding of the named categories or rule codes was
        on the line it covers (or anywhere in the file, for `ignore-file`). A name in the
        brackets that is neither a rule code, a rule name nor a category is reported too.
        Computed by the engine after all other rules have run; only entries whose rules were
        selected for the run are judged.

    Why it matters on AMD GPUs:
        Suppressions record decisions about code that needed manual porting work ("this
        32-lane mask is fine, the kernel only runs on wave32 parts"). When the code changes,
        a stale suppression silently hides the next real problem on the same line, e.g. a new
        warp-size assumption that breaks on 64-lane AMD wavefronts. Removing unused
        suppressions keeps every remaining one meaningful.

    Example:
        // The launch below was rewritten to use warpSize, so this comment no longer applies:
        // hipport: ignore[warp-size] 32 lanes assumed
        int lane = threadIdx.x % warpSize;

    Fix:
        Delete the comment, or narrow its brackets to the categories or codes that are still
        flagged on that line. Misspelled names (`ignore[warpsize]`) must be corrected to a
        category (`warp-size`), a rule code or a rule name (`hipport rules` lists them).
    """
    return ()

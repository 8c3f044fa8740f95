"""Reading source: for C/C++/CUDA the lexer (regions), tree-sitter (syntax) and what builds on
them; for Python, one walk over `ast`'s tree (python).

The byte classes of identifiers and spaces live here, so that a module needing only them (the
kernel scan's report side, say) does not import the lexer."""

# The bytes identifiers are made of (ASCII, as the lexer's words are): for strip() and as a set.
WORD_BYTES = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
IS_WORD_BYTE = frozenset(WORD_BYTES)
IS_SPACE_BYTE = frozenset(b" \t\r\n\f\v")  # what `\s` matches in a bytes pattern

"""Only the C part of the build; everything else is in pyproject.toml.

The lexer's scanner (hipport/parse/_scan.c) is optional: where no C compiler is found the
install goes on, and the lexer uses its compiled regex instead (same tokens, slower).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("hipport.parse._scan", ["hipport/parse/_scan.c"], optional=True)])

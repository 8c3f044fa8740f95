"""The report templates' compiled code, kept between runs as hipport keeps its tables' and
patterns' (hipport.locations: beside hipport's bytecode, or in its cache folder).

jinja2 compiles a template's source to Python each time it loads it: 70 of the 130 ms that
writing a small project's report took. jinja2 checks a kept copy against the template's
source (its checksum) and its own version, and compiles anew when either differs.
"""

from __future__ import annotations

import os

import jinja2

from hipport.locations import copy_places, read_copy, write_copy

_HERE = os.path.dirname(os.path.realpath(__file__))


class _Kept(jinja2.BytecodeCache):
    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        def read(path: str) -> bool | None:
            try:
                with open(path, "rb") as f:
                    bucket.bytecode_from_string(f.read())
            except Exception:  # noqa: BLE001 - absent, unreadable or damaged: compiled anew
                bucket.reset()
            return True if bucket.code is not None else None

        read_copy(_places(bucket.key), read)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        write_copy(_places(bucket.key), bucket.bytecode_to_string())


def _places(key: str):
    return copy_places(_HERE, f"template-{key[:16]}")


KEPT = _Kept()  # the bytecode cache of the report's jinja2 environments

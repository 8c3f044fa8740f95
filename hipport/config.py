"""Settings: one frozen value built from `[tool.hipport]` (pyproject.toml or .hipport.toml)
and the command line, which wins."""

from __future__ import annotations

from pathlib import Path

from hipport import TYPE_CHECKING
from hipport.errors import HipportError
from hipport.tuples import NamedTuple

if TYPE_CHECKING:
    from typing import Any

# Folders never ported or analyzed. Those in NEVER_COPIED (VCS data, caches, environments,
# build output) are not walked at all; the others (vendored code) are copied to OUT as they
# are, so OUT still builds.
NEVER_COPIED = (
    ".git", ".hg", ".svn", "__pycache__", ".tox", ".venv", "venv", "node_modules",
    "build", "dist", "_build", "cmake-build-*", ".eggs", "*.egg-info", ".pytest_cache",
)
DEFAULT_EXCLUDE = NEVER_COPIED + ("third_party", "third-party", "thirdparty", "vendor", "external", "3rdparty")


class Settings(NamedTuple):
    launch_syntax: str = "keep"  # keep | hip
    target_hip: tuple[int, int] | None = None  # None: newest release in the tables
    libs: str = "hip"  # hip | roc
    experimental: bool = False
    rename: bool = False
    torch_hipify: str = "v2"  # v2: torch >= 2.11 spellings; v1: torch <= 2.10 (Masquerading)
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    max_file_bytes: int = 64 * 1024 * 1024
    jobs: int = 0  # 0: one per CPU this process may use (parallel.processes)

    @property
    def excluded(self) -> tuple[str, ...]:
        return self.exclude + self.extend_exclude

    def cache_key(self) -> tuple:
        """Everything that changes a file's port result."""
        return (self.launch_syntax, self.target_hip, self.libs, self.experimental, self.rename,
                self.torch_hipify, self.max_file_bytes)


def parse_target(text: str) -> tuple[int, int]:
    parts = text.split(".")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts) or int(parts[0]) < 1:
        raise HipportError(f"--target-hip wants a HIP release as MAJOR.MINOR like 6.2, not {text!r}")
    return int(parts[0]), int(parts[1])


_KEYS = {name.replace("_", "-"): name for name in Settings._fields}


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest `.hipport.toml` or `pyproject.toml` with a [tool.hipport] table."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        for name in (".hipport.toml", "pyproject.toml"):
            p = folder / name
            if p.is_file():
                try:
                    data = p.read_bytes()
                except OSError as exc:
                    raise HipportError(f"{p}: cannot read configuration: {exc}") from None
                if name == "pyproject.toml" and b"hipport" not in data:
                    continue  # no [tool.hipport] table: a project's own pyproject.toml, left unparsed
                import tomllib  # noqa: PLC0415 - only where a file to read exists: 2 ms a run, typing's 3 more

                try:
                    doc = tomllib.loads(data.decode("utf-8"))
                except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                    raise HipportError(f"{p}: cannot read configuration: {exc}") from None
                table = doc.get("tool", {}).get("hipport") if name == "pyproject.toml" else doc.get("tool", {}).get("hipport", doc)
                if table is not None:
                    return p, table
    return None


def load_settings(paths: list[Path], **overrides: Any) -> Settings:
    """Settings from the configuration file nearest the first path, then `overrides`."""
    values: dict[str, Any] = {}
    found = find_config(paths[0]) if paths else None
    if found:
        where, table = found
        for key, value in table.items():
            if not isinstance(value, (str, int, bool, list)):
                continue  # sub-tables (estimate rates, ...) belong to other commands
            name = _KEYS.get(key) or (key if key in _KEYS.values() else None)
            if name is None:
                continue
            if name == "target_hip":
                value = parse_target(str(value))
            elif isinstance(value, list):
                value = tuple(str(v) for v in value)
            values[name] = value
    values.update({k: v for k, v in overrides.items() if v is not None})
    settings = Settings(**values)
    if settings.launch_syntax not in ("keep", "hip"):
        raise HipportError(f"launch-syntax must be keep or hip, not {settings.launch_syntax!r}")
    if settings.libs not in ("hip", "roc"):
        raise HipportError(f"libs must be hip or roc, not {settings.libs!r}")
    if settings.torch_hipify not in ("v1", "v2"):
        raise HipportError(f"torch-hipify must be v1 or v2, not {settings.torch_hipify!r}")
    return settings


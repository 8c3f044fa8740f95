"""blake2b, the hash of the cache's keys and of the tables' digest, without importing hashlib:
hashlib loads OpenSSL's module when imported (4 ms of every run, a pre-commit check included).
OpenSSL's sha256 is faster on a CPU with SHA instructions (5.7 ms against 13.5 ms per 10 MB
on the benchmark machine), but only a cold run of a large tree hashes enough to win back the
import; a warm run or a pre-commit check would pay it for nothing."""

try:
    from _blake2 import blake2b
except ImportError:  # a Python without the built-in module
    from hashlib import blake2b

__all__ = ["blake2b"]

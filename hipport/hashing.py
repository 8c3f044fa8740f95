"""blake2b, the hash of the cache's keys and of the tables' digest, without importing hashlib:
hashlib loads OpenSSL's module when imported (4 ms of every run, a pre-commit check included),
and CPython's own blake2b is as fast as OpenSSL's sha256 on file contents."""

try:
    from _blake2 import blake2b
except ImportError:  # a Python without the built-in module
    from hashlib import blake2b

__all__ = ["blake2b"]

"""Files and folders the tools are given, checked with os.stat before any open, so no input makes a tool wait or grow.

A FIFO's open() waits for a writer, /dev/zero and /dev/urandom never end, a socket cannot be read, /dev/stdin is
whatever the shell connected: only regular files (and folders where a folder is expected) are read, each within a
size bound, and the file is opened non-blocking and checked again on its descriptor (a path swapped for a FIFO between
the stat and the open is still refused). A refusal is an InputError of one line: `<what>: <why>; allowed: <what is>`.
Standard library only: tools/mirror-model.py uses it too.
"""
from __future__ import annotations

import os
import stat

# -f files and --set-file files: Helm keeps the values in the release's Secret, which the API server caps at 1 MiB.
MAX_VALUES_BYTES = 1 << 20
MIB = 1 << 20


class InputError(Exception):
    """A file or folder argument a tool refuses before reading it; the message is one line."""


def kind(mode: int) -> str:
    """What a stat mode is, in words."""
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                        (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return words
    return "not a regular file"


def size_words(limit: int) -> str:
    """A byte bound as people read it: `1 MiB (1048576 bytes)`."""
    return f"{limit // MIB} MiB ({limit} bytes)" if limit % MIB == 0 else f"{limit} bytes"


def _stat(path: str | os.PathLike, what: str, allowed: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{what}: no such file or directory; allowed: {allowed}") from None
    except OSError as error:
        raise InputError(f"{what}: {(error.strerror or str(error)).lower()}; allowed: {allowed}") from None


def _refuse_mode(mode: int, what: str, allowed: str) -> None:
    why = "reading it as a file fails" if stat.S_ISDIR(mode) else "reading it may wait forever or never end"
    raise InputError(f"{what}: {kind(mode)}, not a regular file: {why}; allowed: {allowed}")


def check_file(path: str | os.PathLike, what: str, limit: int, allowed: str = "") -> os.stat_result:
    """os.stat of `path` (links followed, as open follows them): refused unless a regular file of at most `limit`
    bytes. `what` names the argument (`-f /tmp/x`); `allowed` replaces the default `a regular file of at most ...`."""
    allowed = allowed or f"a regular file of at most {size_words(limit)}"
    info = _stat(path, what, allowed)
    if not stat.S_ISREG(info.st_mode):
        _refuse_mode(info.st_mode, what, allowed)
    if info.st_size > limit:
        raise InputError(f"{what}: {info.st_size} bytes, larger than {size_words(limit)}, the most this file may hold "
                         f"here; allowed: {allowed}")
    return info


def read_file(path: str | os.PathLike, what: str, limit: int, allowed: str = "") -> bytes:
    """The bytes of a regular file of at most `limit` bytes (check_file first; then opened non-blocking, its
    descriptor checked again, and at most limit + 1 bytes read, so a file that grows is refused too)."""
    allowed = allowed or f"a regular file of at most {size_words(limit)}"
    check_file(path, what, limit, allowed)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputError(f"{what}: {(error.strerror or str(error)).lower()}; allowed: {allowed}") from None
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped between the stat and the open
            _refuse_mode(mode, what, allowed)
        data = file.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{what}: larger than {size_words(limit)}, the most this file may hold here; "
                         f"allowed: {allowed}")
    return data


def check_folder(path: str | os.PathLike, what: str, allowed: str = "a directory") -> os.stat_result:
    """os.stat of `path`: refused unless a directory."""
    info = _stat(path, what, allowed)
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"{what}: {kind(info.st_mode)}, not a directory; allowed: {allowed}")
    return info

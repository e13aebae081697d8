"""Every path a client names resolves here, under a root the operator configured (as the
TypeScript kit's packages/kit/src/paths/path-root.ts): relative paths only, no `..`, no symlink
that leads out of the root, directories where directories are expected and regular files where
files are read. Errors name the field and the path given, never anything read from the disk."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from .errors import LearnerError


class PathError(LearnerError):
    """A client-given path that is refused; `code` says which status answers it."""

    def __init__(self, message: str, field: str, code: str):
        super().__init__(message)
        self.field = field
        self.code = code  # "invalid" (INVALID_ARGUMENT) | "missing" (NOT_FOUND)


class PathRoot:
    """One configured root; `key` is the config key that sets it, named in errors."""

    def __init__(self, directory: str, key: str):
        self.dir = Path(os.path.abspath(directory))
        self.key = key

    def resolve(self, given: str, field: str) -> Path:
        """The path under the root, checked by its text alone."""
        if given == "":
            raise PathError(f"{field} is empty; give a path relative to {self.key}", field, "invalid")
        if "\0" in given:
            raise PathError(f"{field} holds a NUL character", field, "invalid")
        if os.path.isabs(given) or re.match(r"^[A-Za-z]:[\\/]", given):
            raise PathError(f'{field} "{given}" is absolute; give a path relative to {self.key}', field, "invalid")
        if ".." in re.split(r"[\\/]", given):
            raise PathError(f'{field} "{given}" contains "..": paths stay inside {self.key}', field, "invalid")
        return self.dir / given

    def existing_directory(self, given: str, field: str) -> Path:
        """The real path of an existing directory under the root."""
        resolved = self.resolve(given, field)
        root = self._real_root(field)
        if not resolved.exists():
            raise PathError(f'{field} "{given}" does not exist under {self.key}', field, "missing")
        real = Path(os.path.realpath(resolved))
        if not _inside(root, real):
            raise _escapes(given, field, self.key)
        if not real.is_dir():
            raise PathError(f'{field} "{given}" is not a directory', field, "invalid")
        return real

    def directory_for_write(self, given: str, field: str) -> Path:
        """A directory under the root to write into, made with its parents; every part that exists stays inside the root."""
        resolved = self.resolve(given, field)
        self.dir.mkdir(parents=True, exist_ok=True)
        root = self._real_root(field)
        existing = resolved
        while not os.path.lexists(existing):
            existing = existing.parent
        if not _inside(root, Path(os.path.realpath(existing))):
            raise _escapes(given, field, self.key)
        try:
            resolved.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PathError(f'{field} "{given}" cannot be created ({_errno_name(error)})', field, "invalid") from None
        # Checked again once it exists: a part swapped for a symlink meanwhile is caught here.
        return self.existing_directory(given, field)

    def check_files(self, directory: Path, names: list[str], field: str) -> None:
        """Every named file that exists inside `directory` is a regular file under the root."""
        root = self._real_root(field)
        for name in names:
            file = directory / name
            if not os.path.lexists(file):
                continue  # a missing file is the reader's error to report
            shown = os.path.relpath(file, root)
            real = Path(os.path.realpath(file))
            if not _inside(root, real):
                raise _escapes(shown, field, self.key)
            if not real.exists() or not stat.S_ISREG(real.stat().st_mode):
                raise PathError(f'{field} "{shown}" is not a regular file (a directory, FIFO or device is refused)', field, "invalid")

    def _real_root(self, field: str) -> Path:
        if not self.dir.is_dir():
            raise PathError(f"{field}: {self.key} does not exist on this server", field, "missing")
        return Path(os.path.realpath(self.dir))


def _inside(root: Path, real: Path) -> bool:
    return real == root or root in real.parents


def _escapes(given: str, field: str, key: str) -> PathError:
    return PathError(f'{field} "{given}" leads out of {key} (through a symlink)', field, "invalid")


def _errno_name(error: OSError) -> str:
    import errno

    return errno.errorcode.get(error.errno or 0, "error")

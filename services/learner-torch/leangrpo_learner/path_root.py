"""Every path a client names, and every file the learner keeps under checkpoint_dir, is reached
here (as the TypeScript kit's packages/kit/src/paths does): relative paths only, no `..`, and no
symlink anywhere below the root, refused rather than followed. Directories are walked one name at
a time from an open descriptor (os.open with dir_fd, O_DIRECTORY | O_NOFOLLOW), files are opened
with O_NOFOLLOW relative to their directory's descriptor and written under a fresh O_EXCL name
then renamed over the target in that same directory, so a symlink planted or swapped in at any
moment is never followed: there is no check followed by a separate use of the path. Errors name
the field and the path relative to the root, never where a symlink points nor anything read."""
from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from pathlib import Path

from .errors import LearnerError

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO in a file's place must not hang open(); it is refused once opened.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class PathError(LearnerError):
    """A client-given path that is refused; `code` says which status answers it."""

    def __init__(self, message: str, field: str, code: str):
        super().__init__(message)
        self.field = field
        self.code = code  # "invalid" (INVALID_ARGUMENT) | "missing" (NOT_FOUND) | "too_large" (RESOURCE_EXHAUSTED)


def relative_names(given: str, field: str, key: str) -> list[str]:
    """The names of a path given relative to a root, checked by its text alone."""
    if given == "":
        raise PathError(f"{field} is empty; give a path relative to {key}", field, "invalid")
    if "\0" in given:
        raise PathError(f"{field} holds a NUL character", field, "invalid")
    if os.path.isabs(given) or re.match(r"^[A-Za-z]:[\\/]", given):
        raise PathError(f'{field} "{given}" is absolute; give a path relative to {key}', field, "invalid")
    if ".." in re.split(r"[\\/]", given):
        raise PathError(f'{field} "{given}" contains "..": paths stay inside {key}', field, "invalid")
    return [name for name in given.split("/") if name not in ("", ".")]


class RootDirectory:
    """A directory under a root, held open by its descriptor; every name below it is opened from there.
    Use it as a context manager (or close() it)."""

    def __init__(self, fd: int, path: Path, relative: str, key: str, field: str):
        self.fd = fd
        self.path = path  # where it is on this host, for messages; never resolved again here
        self.relative = relative  # its path relative to the root, "" for the root itself
        self.key = key
        self.field = field

    def __enter__(self) -> "RootDirectory":
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def directory(self, relative: str, create: bool = False) -> "RootDirectory":
        """The directory at `relative` below this one (made with its parents when `create`)."""
        names = relative_names(relative, self.field, self.key)
        if not names:
            return RootDirectory(os.open(".", _DIRECTORY, dir_fd=self.fd), self.path, self.relative, self.key, self.field)
        return self._walk(names, create, self._shown("/".join(names)))

    def read_bytes(self, relative: str, max_bytes: int | None = None) -> bytes:
        """A regular file below this directory, read whole (refused beyond `max_bytes`)."""
        return self._in_parent(relative, False, lambda parent, name, requested: parent._read_here(name, requested, max_bytes))

    def read_optional(self, relative: str) -> bytes | None:
        """As read_bytes, or None when nothing is there (a symlink or a FIFO there is still refused)."""
        try:
            return self.read_bytes(relative)
        except PathError as error:
            if error.code == "missing":
                return None
            raise

    def write_bytes(self, relative: str, data: bytes) -> None:
        """Replaces (or creates) the file at `relative`, making missing directories: written under a fresh
        name in the same directory and renamed over it; a symlink in its place is refused."""
        self._in_parent(relative, True, lambda parent, name, _: parent._replace_here(name, data))

    def check_writable(self, relative: str) -> None:
        """Refuses now what write_bytes would refuse, creating nothing: a writer of several files checks
        them all first, so that a refused request leaves nothing half-written."""
        try:
            self._in_parent(relative, False, lambda parent, name, _: parent._check_replaceable(name))
        except PathError as error:
            if error.code != "missing":  # missing parents are made by write_bytes
                raise

    # ---- one name inside this directory ------------------------------------------------------

    def _shown(self, relative: str) -> str:
        return "/".join(part for part in (self.relative, relative) if part)

    def _walk(self, names: list[str], create: bool, requested: str) -> "RootDirectory":
        current = self
        try:
            for name in names:
                child = current._child(name, create, requested)
                if current is not self:
                    current.close()
                current = child
            return current
        except BaseException:
            if current is not self:
                current.close()
            raise

    def _in_parent(self, relative: str, create: bool, use):
        names = relative_names(relative, self.field, self.key)
        requested = self._shown("/".join(names))
        if not names:
            raise self._not_regular(requested or ".")
        name = names.pop()
        parent = self._walk(names, create, requested) if names else self
        try:
            return use(parent, name, requested)
        finally:
            if parent is not self:
                parent.close()

    def _child(self, name: str, create: bool, requested: str) -> "RootDirectory":
        if create:
            try:
                os.mkdir(name, dir_fd=self.fd)
            except FileExistsError:
                pass
            except OSError as error:
                raise self._failed(name, "created", error) from None
        try:
            fd = os.open(name, _DIRECTORY, dir_fd=self.fd)
        except OSError as error:
            raise self._refusal(name, error, "directory", requested) from None
        return RootDirectory(fd, self.path / name, self._shown(name), self.key, self.field)

    def _read_here(self, name: str, requested: str, max_bytes: int | None) -> bytes:
        try:
            fd = os.open(name, _READ, dir_fd=self.fd)
        except OSError as error:
            raise self._refusal(name, error, "file", requested) from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise self._not_regular(self._shown(name))
            if max_bytes is not None and info.st_size > max_bytes:
                raise self._too_large(name, max_bytes)
            data = file.read() if max_bytes is None else file.read(max_bytes + 1)
            if max_bytes is not None and len(data) > max_bytes:
                raise self._too_large(name, max_bytes)
            return data

    def _check_replaceable(self, name: str) -> None:
        try:
            present = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(present.st_mode):
            raise self._symlink(name)
        if not stat.S_ISREG(present.st_mode):
            raise self._not_regular(self._shown(name))

    def _replace_here(self, name: str, data: bytes) -> None:
        # os.replace would replace a symlink, not write through it; it is refused all the same, so that a planted one is seen.
        self._check_replaceable(name)
        temporary = f".{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(temporary, _CREATE, 0o666, dir_fd=self.fd)
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as error:
            try:
                os.unlink(temporary, dir_fd=self.fd)
            except OSError:
                pass
            # The server's side (a full disk, a permission), not the client's path: not a PathError.
            raise LearnerError(f"cannot write {self._shown(name)} under {self.key} ({errno.errorcode.get(error.errno or 0, 'error')})") from None

    def _refusal(self, name: str, error: OSError, wanted: str, requested: str) -> PathError:
        """Why `name` could not be opened as wanted: what lstat says is there now (never where a symlink points)."""
        if error.errno == errno.ENOENT:
            return PathError(f'{self.field} "{requested or "."}" does not exist under {self.key}', self.field, "missing")
        try:
            info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            info = None
        if info is not None and stat.S_ISLNK(info.st_mode):
            return self._symlink(name)
        if info is not None and wanted == "directory" and not stat.S_ISDIR(info.st_mode):
            return PathError(f'{self.field} "{self._shown(name)}" is not a directory', self.field, "invalid")
        if info is not None and wanted == "file" and not stat.S_ISREG(info.st_mode):
            return self._not_regular(self._shown(name))
        return self._failed(name, "opened", error)

    def _symlink(self, name: str) -> PathError:
        return PathError(f'{self.field} "{self._shown(name)}" is a symlink; symlinks inside {self.key} are refused', self.field, "invalid")

    def _not_regular(self, shown: str) -> PathError:
        return PathError(f'{self.field} "{shown}" is not a regular file (a directory, FIFO or device is refused)', self.field, "invalid")

    def _too_large(self, name: str, max_bytes: int) -> PathError:
        return PathError(f'{self.field} "{self._shown(name)}" is larger than {max_bytes} bytes, the most this server reads', self.field, "too_large")

    def _failed(self, name: str, doing: str, error: OSError) -> PathError:
        return PathError(f'{self.field} "{self._shown(name)}" cannot be {doing} ({errno.errorcode.get(error.errno or 0, "error")})', self.field, "invalid")


class PathRoot:
    """One configured root; `key` is the config key that sets it, named in errors. The root itself
    (and any symlink above or at it) is the operator's and is followed; nothing below it is."""

    def __init__(self, directory: str, key: str):
        self.dir = Path(os.path.abspath(directory))
        self.key = key

    def resolve(self, given: str, field: str) -> Path:
        """The path under the root, checked by its text alone (for naming it; open_directory reaches the disk)."""
        relative_names(given, field, self.key)
        return self.dir / given

    def open_directory(self, given: str, field: str, create: bool = False) -> RootDirectory:
        """The directory `given` under the root, held open (made with its parents when `create`)."""
        relative_names(given, field, self.key)
        with self._open_root(field, create) as root:
            return root.directory(given, create)

    def existing_directory(self, given: str, field: str) -> Path:
        """Checks that `given` is a directory under the root reached without a symlink; its path (for messages)."""
        with self.open_directory(given, field) as directory:
            return directory.path

    def directory_for_write(self, given: str, field: str) -> Path:
        """Makes the directory `given` under the root with its parents, no symlink on the way; its path."""
        with self.open_directory(given, field, create=True) as directory:
            return directory.path

    def _open_root(self, field: str, create: bool) -> RootDirectory:
        if create:
            self.dir.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise PathError(f"{field}: {self.key} does not exist on this server", field, "missing") from None
        except OSError as error:
            raise PathError(f"{field}: {self.key} cannot be opened ({errno.errorcode.get(error.errno or 0, 'error')})", field, "invalid") from None
        return RootDirectory(fd, Path(os.path.realpath(self.dir)), "", self.key, field)

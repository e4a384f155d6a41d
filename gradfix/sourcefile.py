"""Reading and writing Python source files without losing what makes them theirs.

Encoding (PEP 263 cookie or BOM), line endings and file mode survive a rewrite;
writes are atomic and refuse to clobber a file that changed since it was read.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass


class SourceError(Exception):
    """A file could not be read or decoded; carries a 1-based line when known."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


class ConcurrentModification(Exception):
    """The file on disk is no longer what was read."""


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str          # decoded text, without BOM, with the file's own line endings
    encoding: str      # codec name used to decode
    bom: bool          # a UTF-8 BOM preceded the text
    raw: bytes         # exactly what was read, to detect concurrent changes

    @classmethod
    def read(cls, path: str) -> "SourceFile":
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise SourceError(f"cannot read file: {exc.strerror or exc}") from exc
        return cls.from_bytes(path, raw)

    @classmethod
    def from_bytes(cls, path: str, raw: bytes) -> "SourceFile":
        bom = raw.startswith(codecs.BOM_UTF8)
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as exc:
            raise SourceError(f"cannot detect encoding: {exc}", _line_of(exc)) from exc
        body = raw[len(codecs.BOM_UTF8):] if bom else raw
        codec = "utf-8" if encoding == "utf-8-sig" else encoding
        try:
            text = body.decode(codec)
        except (UnicodeDecodeError, LookupError) as exc:
            line = None
            if isinstance(exc, UnicodeDecodeError):
                line = body[: exc.start].count(b"\n") + 1
            raise SourceError(f"cannot decode as {codec}: {exc}", line) from exc
        return cls(path=path, text=text, encoding=codec, bom=bom, raw=raw)

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data

    def write(self, new_text: str) -> None:
        """Atomically replace the file with `new_text`, keeping mode, encoding and BOM."""
        data = self.encode(new_text)
        try:
            with open(self.path, "rb") as fh:
                current = fh.read()
        except OSError as exc:
            raise ConcurrentModification(f"file disappeared: {exc}") from exc
        if current != self.raw:
            raise ConcurrentModification("file changed on disk since it was read; not overwritten")
        target = os.path.realpath(self.path)
        directory = os.path.dirname(target) or "."
        mode = stat.S_IMODE(os.stat(target).st_mode)
        fd, tmp = tempfile.mkstemp(prefix=".gradfix-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def _line_of(exc: SyntaxError) -> int | None:
    return getattr(exc, "lineno", None)

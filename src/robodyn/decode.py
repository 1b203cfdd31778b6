"""Bounded decoding of compressed data files: what a reader decompresses is measured before it is kept.

A few kilobytes of bz2, zstd or lz4 can expand to gigabytes. The readers of robodyn never trust a size that a
file declares: before a reader library decompresses a ROS 1 bag chunk, an MCAP chunk, a zstd-compressed ROS 2
storage file or message, the compressed bytes are decompressed here in steps of 1 MiB, each step dropped after
it is counted, and the file is refused as soon as the output passes the size its header declares or
:func:`robodyn.files.decoded_limit` (:data:`robodyn.files.MAX_DECODED_BYTES`, 1 GiB, lifted by ``--allow-large``
or ``ROBODYN_ALLOW_LARGE=1``). Memory stays bounded by the step, whatever the file holds.

The record layouts walked here are those of the ROS 1 bag format 2.0 (records of ``header_len, header,
data_len, data``) and of MCAP (records of ``opcode u8, length u64, content``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import BinaryIO

from robodyn.errors import InputError, RobodynError
from robodyn.files import decoded_limit, too_large

#: bytes read from a file per step
STEP = 1 << 20
_MCAP_MAGIC = b"\x89MCAP0\r\n"
_MCAP_CHUNK, _MCAP_FOOTER = 0x06, 0x02


class BoundedStream:
    """Decompress in steps of at most ``step`` bytes, refusing output beyond :func:`decoded_limit` (and beyond
    ``declared``, the size a header states, when given).

    ``feed(data)`` takes compressed bytes and yields the decompressed bytes (the decompressor objects of
    :mod:`bz2`, ``zstd`` and ``lz4.frame`` all take ``decompress(data, max_length)``); a stream of several frames
    is followed across them with ``new()``, a fresh decompressor. ``total`` counts the bytes produced. Nothing
    is kept: the caller sees each step and drops it.
    """

    def __init__(self, new: Callable, label: str, what: str, declared: int | None = None, step: int = 1 << 20):
        self.new, self.label, self.what, self.step, self.declared = new, label, what, step, declared
        self.total = 0
        self._d = new()

    def _count(self, out: bytes) -> bytes:
        self.total += len(out)
        if self.declared is not None and self.total > self.declared:
            raise InputError(f"{self.label}: {self.what} decodes to more than the {self.declared} bytes its header "
                             "declares; the file is damaged or forged")
        if self.total > decoded_limit():
            raise too_large(self.label, self.what)
        return out

    def feed(self, data: bytes):
        """Yield the decompressed output of ``data``, step by step."""
        while True:
            if getattr(self._d, "eof", False):
                data = self._d.unused_data + data
                if not data:
                    return
                self._d = self.new()
            out = self._d.decompress(data, self.step)
            data = b""
            if out:
                yield self._count(out)
            if getattr(self._d, "eof", False):
                if not self._d.unused_data:
                    return
                continue
            if self._d.needs_input:
                return


def _zstd():
    """The zstd module rosbags decompresses with: Python 3.14's, or the backports.zstd package before it."""
    try:
        from compression import zstd
    except ImportError:
        try:
            from backports import zstd
        except ImportError:
            raise RobodynError("reading zstd-compressed bags needs the package backports.zstd (a dependency of "
                               "rosbags); install it with: pip install backports.zstd") from None
    return zstd


def decompressor(codec: str, label: str):
    """A factory of fresh decompressor objects for ``codec`` ("bz2", "lz4", "zstd")."""
    if codec == "bz2":
        import bz2

        return bz2.BZ2Decompressor
    if codec == "lz4":
        import lz4.frame

        return lz4.frame.LZ4FrameDecompressor
    if codec == "zstd":
        return _zstd().ZstdDecompressor
    raise InputError(f"{label}: unknown compression {codec[:40]!r}; robodyn reads none, bz2, lz4 and zstd")


def blocks(fh: BinaryIO, size: int, label: str) -> Iterator[bytes]:
    """``size`` bytes of ``fh`` in blocks of at most :data:`STEP`; InputError when the file ends before."""
    while size > 0:
        block = fh.read(min(STEP, size))
        if not block:
            raise InputError(f"{label}: the file ends inside a record; it is truncated or damaged")
        size -= len(block)
        yield block


def measure(source, codec: str, label: str, what: str, declared: int | None = None) -> int:
    """Bytes that ``source`` (an iterable of compressed blocks) decompresses to, measured step by step.

    InputError as soon as the output passes ``declared`` (when given) or the decoded limit; nothing is kept."""
    stream = BoundedStream(decompressor(codec, label), label, what, declared, STEP)
    try:
        for block in source:
            for _ in stream.feed(block):
                pass
    except InputError:
        raise
    except Exception as exc:  # damaged data: each codec has its own errors (ZstdError, OSError, RuntimeError, ...)
        raise InputError(f"{label}: {what} is not valid {codec} data ({type(exc).__name__})") from None
    return stream.total


def _exact(fh: BinaryIO, size: int, label: str) -> bytes:
    data = fh.read(size)
    if len(data) != size:
        raise InputError(f"{label}: the file ends inside a record; it is truncated or damaged")
    return data


# ---- ROS 1 bags ----

def ros1_header(fh: BinaryIO, label: str, limit: int = 1 << 20) -> dict:
    """The fields of the ROS 1 record header at the position of ``fh`` ({name: value bytes})."""
    (size,) = struct.unpack("<I", _exact(fh, 4, label))
    if size > limit:
        raise InputError(f"{label}: a record header declares {size} bytes; the bag is damaged or forged")
    raw, fields, k = _exact(fh, size, label), {}, 0
    while k + 4 <= size:
        (n,) = struct.unpack_from("<I", raw, k)
        name, eq, value = raw[k + 4:k + 4 + n].partition(b"=")
        if not eq or k + 4 + n > size:
            raise InputError(f"{label}: a record header is malformed; the bag is damaged or forged")
        fields[name.decode("ascii", "replace")] = value
        k += 4 + n
    return fields


def check_ros1_chunks(fh: BinaryIO, positions, label: str) -> int:
    """Measure every compressed chunk of a ROS 1 bag that starts at one of ``positions`` (file offsets of chunk
    records); the bytes they decompress to, in all. A chunk is refused when it decodes to more than the
    ``size`` its header declares or than the limit."""
    total = 0
    for pos in sorted(set(positions)):
        fh.seek(pos)
        fields = ros1_header(fh, label)
        codec = fields.get("compression", b"none").decode("ascii", "replace")
        (datasize,) = struct.unpack("<I", _exact(fh, 4, label))
        if codec == "none":
            total += datasize
            continue
        size = fields.get("size", b"")
        declared = struct.unpack("<I", size)[0] if len(size) == 4 else None
        total += measure(blocks(fh, datasize, label), codec, label, f"the {codec} chunk at byte {pos}", declared)
    return total


# ---- MCAP ----

def check_mcap(fh: BinaryIO, label: str, size: int | None = None) -> None:
    """Walk the records of the MCAP stream ``fh`` from its start (read in order, never seeking: ``fh`` may be a
    decompressing stream) and measure every compressed chunk. ``size``: the stream's length when known."""
    if _exact(fh, 8, label) != _MCAP_MAGIC:
        raise InputError(f"{label}: not an MCAP file (no MCAP magic bytes)")
    left = None if size is None else size - 8
    while True:  # to the footer, or to the end of a recording that was not closed
        head = fh.read(9)
        if not head:
            return
        if len(head) != 9:
            raise InputError(f"{label}: the file ends inside a record; it is truncated or damaged")
        op, length = head[0], struct.unpack("<Q", head[1:])[0]
        if left is not None:
            left -= 9
            if length > left:
                raise InputError(f"{label}: a record declares {length} bytes, more than the file holds; the bag "
                                 "is damaged or forged")
            left -= length
        if op == _MCAP_CHUNK:
            _mcap_chunk(fh, length, label)
        else:
            for _ in blocks(fh, length, label):
                pass
        if op == _MCAP_FOOTER:
            return


def _mcap_chunk(fh: BinaryIO, length: int, label: str) -> None:
    if length < 40:
        raise InputError(f"{label}: an MCAP chunk record of {length} bytes is too short; the bag is damaged")
    fixed = _exact(fh, 32, label)
    declared, = struct.unpack_from("<Q", fixed, 16)
    (n,) = struct.unpack_from("<I", fixed, 28)
    if n > 64 or 40 + n > length:
        raise InputError(f"{label}: an MCAP chunk names a compression of {n} bytes; the bag is damaged or forged")
    codec = _exact(fh, n, label).decode("ascii", "replace")
    (records,) = struct.unpack("<Q", _exact(fh, 8, label))
    if 40 + n + records != length:
        raise InputError(f"{label}: an MCAP chunk's sizes disagree; the bag is damaged or forged")
    what = f"an MCAP chunk ({codec or 'uncompressed'})"
    if not codec:
        for _ in blocks(fh, records, label):
            pass
        if records != declared:
            raise InputError(f"{label}: {what} declares {declared} bytes but holds {records}; the bag is damaged")
        return
    total = measure(blocks(fh, records, label), codec, label, what, declared)
    if total != declared:
        raise InputError(f"{label}: {what} decodes to {total} bytes, not the {declared} it declares; the bag is "
                         "damaged or forged")


# ---- ROS 2 compressed storage files and messages ----

class _Counted:
    """A binary stream over a decompressing reader that refuses to give more than the decoded limit."""

    def __init__(self, inner, label: str, what: str):
        self.inner, self.label, self.what, self.total, self.limit = inner, label, what, 0, decoded_limit()

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(STEP if size is None or size < 0 else min(size, STEP))
        self.total += len(data)
        if self.total > self.limit:
            raise too_large(self.label, self.what)
        return data


def check_zstd_file(path, label: str, mcap: bool) -> int:
    """Decompress the zstd file ``path`` in steps and count its bytes (InputError above the limit); an MCAP
    storage inside is walked too (its chunks measured). Returns the decompressed size."""
    zstd = _zstd()
    try:
        with open(path, "rb") as raw, zstd.open(raw, "rb") as inner:
            stream = _Counted(inner, label, "the zstd-compressed storage file")
            if mcap:
                check_mcap(stream, label)
            while stream.read(STEP):
                pass
            return stream.total
    except InputError:
        raise
    except Exception as exc:  # damaged data: ZstdError, OSError, EOFError, ...
        raise InputError(f"{label}: not a valid zstd file ({type(exc).__name__})") from None


def check_zstd_message(data: bytes, label: str) -> int:
    """The size a zstd-compressed ROS 2 message decodes to, measured in steps (InputError above the limit)."""
    return measure((bytes(data),), "zstd", label, "a zstd-compressed message")

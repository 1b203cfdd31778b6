"""Bounded decoding of compressed data files: what a reader decompresses is measured before it is kept.

A few kilobytes of bz2, zstd or lz4 can expand to gigabytes, so no size a file declares is trusted: compressed
bytes are decompressed here in steps of 1 MiB, and the file is refused as soon as the output passes the size its
header declares or :func:`robodyn.files.decoded_limit`.  MCAP files (ROS 2 bags) are read here
(:func:`read_mcap`, records of ``opcode u8, length u64, content``); the ROS 1 bag chunks (format 2.0) and zstd
files or messages that ``rosbags`` decompresses are measured here first (docs/logs.md).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from robodyn.errors import InputError, RobodynError
from robodyn.files import decoded_limit, too_large

#: bytes read from a file per step
STEP = 1 << 20
_MCAP_MAGIC = b"\x89MCAP0\r\n"
_MCAP_FOOTER, _MCAP_SCHEMA, _MCAP_CHANNEL, _MCAP_MESSAGE, _MCAP_CHUNK = 0x02, 0x03, 0x04, 0x05, 0x06


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


def _inflate(source, codec: str, label: str, what: str, declared: int | None) -> Iterator[bytes]:
    """The decompressed steps of ``source`` (an iterable of compressed blocks); InputError as soon as the output
    passes ``declared`` (when given) or the decoded limit, or when the data is not valid ``codec`` data."""
    stream = BoundedStream(decompressor(codec, label), label, what, declared, STEP)
    try:
        for block in source:
            yield from stream.feed(block)
    except InputError:
        raise
    except Exception as exc:  # damaged data: each codec has its own errors (ZstdError, OSError, RuntimeError, ...)
        raise InputError(f"{label}: {what} is not valid {codec} data ({type(exc).__name__})") from None


def measure(source, codec: str, label: str, what: str, declared: int | None = None) -> int:
    """Bytes that ``source`` (an iterable of compressed blocks) decompresses to, measured step by step and
    dropped (see :func:`_inflate` for the errors)."""
    return sum(len(out) for out in _inflate(source, codec, label, what, declared))


def decompress(source, codec: str, label: str, what: str, declared: int | None = None) -> bytes:
    """What ``source`` (an iterable of compressed blocks) decompresses to, at most ``declared`` bytes (when
    given) and the decoded limit (see :func:`_inflate` for the errors)."""
    return b"".join(_inflate(source, codec, label, what, declared))


def _exact(fh: BinaryIO, size: int, label: str) -> bytes:
    """``size`` bytes of ``fh`` (read in blocks: a decompressing stream gives at most :data:`STEP` at a time)."""
    return b"".join(blocks(fh, size, label))


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

@dataclass(frozen=True)
class McapChannel:
    """A channel of an MCAP file: its topic, its messages' encoding ("cdr" for ROS 2) and its schema (the message
    type's name, the encoding of its definition ("ros2msg", "ros2idl" or "" for none) and the definition)."""

    topic: str
    encoding: str
    schema: str
    schema_encoding: str
    definition: str


class _Fields:
    """The fields of one MCAP record, read in order; InputError when the record is shorter than its fields."""

    def __init__(self, data, label: str):
        self.data, self.at, self.label = memoryview(data), 0, label

    def take(self, n: int) -> memoryview:
        if self.at + n > len(self.data):
            raise InputError(f"{self.label}: an MCAP record is shorter than its fields; the file is damaged")
        self.at += n
        return self.data[self.at - n:self.at]

    def int(self, fmt: str) -> int:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def text(self, fmt: str = "<I") -> str:
        try:
            return bytes(self.take(self.int(fmt))).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{self.label}: an MCAP record holds text that is not UTF-8; the file is damaged") \
                from None


class _Mcap:
    """What :func:`read_mcap` gathers: the schemas and channels, and the messages of one topic."""

    def __init__(self, label: str, topic: str):
        self.label, self.topic, self.kept, self.limit = label, topic, 0, decoded_limit()
        self.schemas: dict[int, tuple[str, str, str]] = {}
        self.channels: dict[int, McapChannel] = {}
        self.messages: list[tuple[int, int, bytes]] = []

    def record(self, op: int, content) -> None:
        """Take a Schema, Channel or Message record (MCAP opcodes 0x03, 0x04, 0x05)."""
        f = _Fields(content, self.label)
        if op == _MCAP_SCHEMA:
            key = f.int("<H")
            self.schemas[key] = (f.text(), f.text(), f.text())
        elif op == _MCAP_CHANNEL:
            key, schema = f.int("<H"), f.int("<H")
            topic, encoding = f.text(), f.text()
            name, form, definition = self.schemas.get(schema, ("", "", ""))
            self.channels[key] = McapChannel(topic, encoding, name, form, definition)
        else:
            channel, _, log_time, _ = f.int("<H"), f.int("<I"), f.int("<Q"), f.int("<Q")
            if channel not in self.channels:
                raise InputError(f"{self.label}: a message of channel {channel} comes before the channel's record; "
                                 "the file is damaged")
            if self.channels[channel].topic == self.topic:
                data = bytes(f.take(len(f.data) - f.at))
                self.kept += len(data)
                if self.kept > self.limit:
                    raise too_large(self.label, f"topic {self.topic[:80]!r}")
                self.messages.append((log_time, channel, data))

    def chunk(self, records: bytes) -> None:
        """Take the records of a decompressed chunk."""
        view, at = memoryview(records), 0
        while at < len(view):
            if at + 9 > len(view):
                raise InputError(f"{self.label}: an MCAP chunk ends inside a record; the file is damaged")
            op, (length,) = view[at], struct.unpack_from("<Q", view, at + 1)
            if length > len(view) - at - 9:
                raise InputError(f"{self.label}: a record in an MCAP chunk declares {length} bytes, more than the "
                                 "chunk holds; the file is damaged or forged")
            if op in (_MCAP_SCHEMA, _MCAP_CHANNEL, _MCAP_MESSAGE):
                self.record(op, view[at + 9:at + 9 + length])
            at += 9 + length


def read_mcap(fh: BinaryIO, label: str, topic: str, size: int | None = None):
    """The channels and the messages of ``topic`` of the MCAP stream ``fh``, every chunk decompressed once.

    The records (``opcode u8, length u64, content``) are read in order from the start, never seeking (``fh`` may
    be a decompressing stream; ``size``: its length when known), to the footer and the closing magic bytes. A
    chunk is decompressed in steps (:class:`BoundedStream`) and refused when its declared size passes
    :func:`robodyn.files.decoded_limit` or its output passes the declared size; the messages kept count against
    the limit too. A file that ends before its footer (an interrupted recording) is refused as truncated.

    Returns
    -------
    channels : dict {channel id: McapChannel}
    messages : list of (log time (ns), channel id, message bytes), in log-time order (stable)
    """
    if _exact(fh, 8, label) != _MCAP_MAGIC:
        raise InputError(f"{label}: not an MCAP file (no MCAP magic bytes)")
    mcap, left, op = _Mcap(label, topic), None if size is None else size - 8, None
    while op != _MCAP_FOOTER:
        head = _exact(fh, 9, label)
        first, (op, length) = op is None, (head[0], struct.unpack_from("<Q", head, 1)[0])
        if left is not None:
            left -= 9
            if length > left:
                raise InputError(f"{label}: a record declares {length} bytes, more than the file holds; the file "
                                 "is truncated, damaged or forged")
            left -= length
        if first:
            profile = _Fields(_exact(fh, min(length, 1 << 16), label), label).text() if op == 0x01 else None
            if profile != "ros2":
                raise InputError(f"{label}: not a ROS 2 MCAP file (its header names the profile "
                                 f"{(profile or '(none)')[:40]!r}, not 'ros2')")
            length -= min(length, 1 << 16)
        if op == _MCAP_CHUNK:
            mcap.chunk(_mcap_chunk(fh, length, label))
        elif op in (_MCAP_SCHEMA, _MCAP_CHANNEL, _MCAP_MESSAGE):
            if length > mcap.limit:
                raise too_large(label, f"a record of {length} bytes")
            mcap.record(op, _exact(fh, length, label))
        else:
            for _ in blocks(fh, length, label):
                pass
    if _exact(fh, 8, label) != _MCAP_MAGIC:
        raise InputError(f"{label}: no MCAP magic bytes after the footer; the file is damaged")
    mcap.messages.sort(key=lambda m: m[0])
    return mcap.channels, mcap.messages


def _mcap_chunk(fh: BinaryIO, length: int, label: str) -> bytes:
    """The records of the MCAP chunk record at the position of ``fh`` (``length`` bytes), decompressed."""
    if length < 40:
        raise InputError(f"{label}: an MCAP chunk record of {length} bytes is too short; the file is damaged")
    fixed = _exact(fh, 32, label)
    declared, crc, n = struct.unpack_from("<QII", fixed, 16)
    if n > 64 or 40 + n > length:
        raise InputError(f"{label}: an MCAP chunk names a compression of {n} bytes; the file is damaged or forged")
    codec = _exact(fh, n, label).decode("ascii", "replace")
    (size,) = struct.unpack("<Q", _exact(fh, 8, label))
    if 40 + n + size != length:
        raise InputError(f"{label}: an MCAP chunk's sizes disagree; the file is damaged or forged")
    what = f"an MCAP chunk ({codec or 'uncompressed'})"
    if declared > decoded_limit():
        raise too_large(label, what)
    records = decompress(blocks(fh, size, label), codec, label, what, declared) if codec else b""
    held = len(records) if codec else size  # checked before an uncompressed chunk is read
    if held != declared:
        raise InputError(f"{label}: {what} holds {held} bytes, not the {declared} it declares; the file is damaged "
                         "or forged")
    if not codec:
        records = _exact(fh, size, label)
    if crc and zlib.crc32(records) != crc:
        raise InputError(f"{label}: {what} fails its checksum; the file is damaged")
    return records


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


def check_zstd_file(path, label: str) -> int:
    """Decompress the zstd file ``path`` in steps and count its bytes (InputError above the limit). Returns the
    decompressed size."""
    return _zstd_file(path, label, lambda stream: sum(map(len, iter(lambda: stream.read(STEP), b""))))


def _zstd_file(path, label: str, use):
    """``use(stream)`` on the zstd file ``path`` opened as a decompressing stream (:class:`_Counted`)."""
    zstd = _zstd()
    try:
        with open(path, "rb") as raw, zstd.open(raw, "rb") as inner:
            return use(_Counted(inner, label, "the zstd-compressed storage file"))
    except InputError:
        raise
    except Exception as exc:  # damaged data: ZstdError, OSError, EOFError, ...
        raise InputError(f"{label}: not a valid zstd file ({type(exc).__name__})") from None


def read_mcap_file(path, label: str, topic: str, zstd_file: bool = False):
    """:func:`read_mcap` of the file ``path``; ``zstd_file``: the file is zstd-compressed whole (a ROS 2 bag of
    compression mode "file"), and is read through one bounded decompressing stream."""
    if zstd_file:
        return _zstd_file(path, label, lambda stream: read_mcap(stream, label, topic))
    with open(path, "rb") as fh:
        return read_mcap(fh, label, topic, os.fstat(fh.fileno()).st_size)

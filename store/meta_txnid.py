"""The last committed transaction id of an LMDB environment, read from its meta pages.

``env.info()`` reads the same two meta pages, but py-lmdb releases the GIL
around it and builds a dict of six entries: a read that must be cheap (the
session cache and the memory feed ask once a turn each, on the request path)
then waits for whichever thread took the GIL meanwhile (the store's writer
coming back from an fsync). This maps the first two pages of ``data.mdb``
read-only (shared: a commit by any process shows at once, as in LMDB's own
map) and reads ``mm_txnid`` of both, the larger being the last commit, as
LMDB picks it.

The layout is LMDB 0.9's on a 64-bit build (a 16-byte page header, then
``MDB_meta``: magic, version, address, map size, two 48-byte ``MDB_db``, last
page, txnid). It is checked once when mapped (magic and version of both pages, and the id read
must equal ``env.info()``'s); where anything disagrees no reader is made and
the caller keeps asking ``env.info()``.
"""
from __future__ import annotations

import mmap
import os
import struct
from typing import Any

_MAGIC = 0xBEEFC0DE
_VERSION = 1  # MDB_DATA_VERSION of LMDB 0.9
_HEADER = 16  # PAGEHDRSZ
_TXNID = _HEADER + 4 + 4 + 8 + 8 + 2 * 48 + 8  # mm_txnid's offset in a meta page
_u32 = struct.Struct("=I").unpack_from
_u64 = struct.Struct("=Q").unpack_from


class MetaTxnid:
    """``read()``: the environment's last committed transaction id; None once closed."""

    __slots__ = ("_map", "_second")

    def __init__(self, mapped: mmap.mmap, psize: int) -> None:
        self._map = mapped
        self._second = psize + _TXNID

    @classmethod
    def open(cls, path: str, env: Any) -> "MetaTxnid | None":
        """A reader of ``path/data.mdb``'s meta pages checked against ``env``, or
        None when they are not laid out as expected (or cannot be mapped)."""
        if struct.calcsize("P") != 8:  # the offsets are a 64-bit build's (pointers and size_t of 8 bytes)
            return None
        try:
            psize = env.stat()["psize"]
            fd = os.open(os.path.join(path, "data.mdb"), os.O_RDONLY)
            try:
                mapped = mmap.mmap(fd, 2 * psize, access=mmap.ACCESS_READ)
            finally:
                os.close(fd)
        except Exception:  # (lmdb.Error too: an environment closed meanwhile) the caller keeps env.info()
            return None
        for page in (0, psize):
            if _u32(mapped, page + _HEADER)[0] != _MAGIC or _u32(mapped, page + _HEADER + 4)[0] != _VERSION:
                mapped.close()
                return None
        reader = cls(mapped, psize)
        if reader.read() != env.info()["last_txnid"]:
            # (a commit between the two reads would disagree too: then the slower way is kept)
            reader.close()
            return None
        return reader

    def read(self) -> int | None:
        try:
            a = _u64(self._map, _TXNID)[0]
            b = _u64(self._map, self._second)[0]
        except ValueError:  # closed (the environment closed or was swapped for a compacted copy)
            return None
        return a if a > b else b

    def close(self) -> None:
        try:
            self._map.close()
        except BufferError:  # a read under way elsewhere holds it: the mapping goes with the object
            pass

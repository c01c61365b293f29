"""Which local program holds a TCP connection.

Best effort and Linux only: the client's socket is looked up in
``/proc/net/tcp{,6}`` by its address, then its inode among the processes'
open files; the program is its ``comm`` name, and its executable the target
of ``/proc/<pid>/exe``. Looked up once per new connection from a loopback
client to an intercepted host, for the log line about a refused certificate
and for ``[mitm] passthrough_programs``; anything it cannot read gives just
the address (and is then never passed through).
"""
from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

PROC = Path("/proc")
MAX_PROCESSES = 4096  # a bound on the scan


class Peer(NamedTuple):
    """A client connection and, when it could be read, the local program holding it;
    ``str()``: ``"python3 (pid 123, /usr/bin/python3.11) at 127.0.0.1:5555"``, or the
    address alone."""

    address: str  # "127.0.0.1:5555"
    pid: int = 0
    name: str = ""  # its comm: "python3", "node", "curl"
    exe: str = ""  # its executable's real path; "" when not ours to read

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid}, {self.exe or 'executable unknown'}) at {self.address}" \
            if self.pid else self.address


def find_peer(peer: Any) -> Peer:
    """The program at the other end of a client connection ``(host, port)``."""
    if not peer:
        return Peer("?")
    host, port = peer[0], peer[1]
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    try:
        found = _process_of(host, port)
    except OSError:
        found = None
    if found is None:
        return Peer(where)
    pid, name = found
    try:
        exe = os.path.realpath(os.readlink(PROC / str(pid) / "exe"))
    except OSError:  # gone, or not ours to read
        exe = ""
    return Peer(where, pid, name, exe)


def _process_of(host: str, port: int) -> tuple[int, str] | None:
    inode = _socket_inode(host, port)
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    own = PROC / str(os.getpid())
    for n, entry in enumerate([own, *(e for e in PROC.iterdir() if e.name != own.name)]):
        if n > MAX_PROCESSES:
            break
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) == target:
                    name = (entry / "comm").read_text().strip()
                    return int(entry.name), name
        except OSError:  # gone, or not ours to read
            continue
    return None


def _socket_inode(host: str, port: int) -> str | None:
    """The inode of the socket whose local address is ``host:port``: the table
    lines are matched as text against the address written the way /proc writes it."""
    ip = ipaddress.ip_address(host)
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    packed = ip.packed
    if sys.byteorder == "little":  # /proc writes each 32-bit word in host order
        packed = b"".join(packed[i:i + 4][::-1] for i in range(0, len(packed), 4))
    needle = f": {packed.hex().upper()}:{port:04X} "  # the local column follows the row number
    table = "tcp" if ip.version == 4 else "tcp6"
    try:
        text = (PROC / "net" / table).read_text()
    except OSError:
        return None
    at = text.find(needle)
    if at < 0:
        return None
    fields = text[at + 2:text.find("\n", at)].split()
    return fields[8] if len(fields) > 8 else None  # after local, remote, st, queues, tr, retrnsmt, uid, timeout

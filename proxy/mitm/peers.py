"""Which local program holds a TCP connection (for log lines about a client).

Best effort and Linux only: the client's socket is looked up in
``/proc/net/tcp{,6}`` by its address, then its inode among the processes'
open files. Used only when something went wrong (a refused certificate), never
per request; anything it cannot read gives just the address.
"""
from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import Any

PROC = Path("/proc")
MAX_PROCESSES = 4096  # a bound on the scan


def describe_peer(peer: Any) -> str:
    """``"python3 (pid 123) at 127.0.0.1:5555"``, or the address alone."""
    if not peer:
        return "?"
    host, port = peer[0], peer[1]
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    try:
        found = _process_of(host, port)
    except OSError:
        found = None
    return f"{found[1]} (pid {found[0]}) at {where}" if found else where


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

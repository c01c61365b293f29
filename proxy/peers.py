"""Which local program holds a TCP connection (for log lines about a client).

Best effort and Linux only: the client's socket is looked up in
``/proc/net/tcp{,6}`` by its address, then its inode among the processes'
open files. Used only when something went wrong (a refused certificate), never
per request; anything it cannot read gives just the address.
"""
from __future__ import annotations

import ipaddress
import os
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
    for n, entry in enumerate(PROC.iterdir()):
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
    ip = ipaddress.ip_address(host)
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    for table in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local = fields[1]
            addr, _, hexport = local.partition(":")
            if int(hexport, 16) == port and _proc_addr(addr) == ip:
                return fields[9]
    return None


def _proc_addr(hexaddr: str) -> Any:
    """An address as /proc/net writes it (32-bit words in host byte order)."""
    raw = bytes.fromhex(hexaddr)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(words)
    if ip.version == 6 and ip.ipv4_mapped:
        return ip.ipv4_mapped
    return ip

"""The ports tests and benchmarks start servers on (benchmarks/perf/servers.py)."""

from __future__ import annotations

import socket

import pytest

from benchmarks.perf.servers import free_ports, refusing_port


def test_a_refusing_port_refuses_and_cannot_be_taken() -> None:
    with refusing_port() as port:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        with socket.socket() as other, pytest.raises(OSError):
            other.bind(("127.0.0.1", port))  # no server started meanwhile can draw it


def test_free_ports_are_distinct_and_free() -> None:
    ports = free_ports(20)
    assert len(set(ports)) == 20
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # released: a server can bind each one

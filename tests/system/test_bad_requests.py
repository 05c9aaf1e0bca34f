"""Bad requests get a definite error and never crash a node."""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable

import pytest

from system import admin
from system.launcher import Cluster
from system.wire import RpcError

from .conftest import do_ops, node_call, run


def raw_exchange(host: str, port: int, payload: bytes) -> bytes:
    """Send raw bytes, return whatever comes back before the node closes or 2 s pass."""
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(payload)
        s.settimeout(2)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except TimeoutError:
            pass
    return out


def test_bad_requests_are_refused_and_the_node_survives(make_cluster: Callable[..., Cluster]) -> None:
    c = make_cluster(nodes=3, tablets=1)
    c.wait_ready()
    leader = c.wait_ready()["tablets"]["0"]["leader"]
    host, port = c.node_addrs[leader]

    with pytest.raises(RpcError) as e:
        node_call(c, leader, "frobnicate", {"tablet": 0})
    assert e.value.code == "unknown_method"

    with pytest.raises(RpcError) as e:
        admin.call_sync(host, port, "put", {"tablet": 0, "key": "k", "value": 1}, to="not-my-uuid")
    assert e.value.code == "wrong_node"

    with pytest.raises(RpcError) as e:
        node_call(c, leader, "fence", {"tablet": 0, "epoch": 0})
    assert e.value.code == "stale_epoch"

    with pytest.raises(RpcError) as e:
        node_call(c, leader, "put", {"tablet": 0})
    assert e.value.code == "bad_request"

    with pytest.raises(RpcError) as e:
        node_call(c, leader, "get", {"tablet": "zero", "key": "k"})
    assert e.value.code == "bad_request"

    with pytest.raises(RpcError) as e:
        node_call(c, leader, "get", {"tablet": 7, "key": "k"})
    assert e.value.code == "unknown_tablet"

    big, ok = run(do_ops(c, [("put", ("big", "x" * (2 * 1024 * 1024))), ("put", ("small", 1))]))
    assert big.type == "fail" and big.error == "value_too_large"
    assert ok.type == "ok"

    # garbage: an absurd length, a body that is not JSON, JSON that is not a request, a torn frame
    assert b"bad_frame" in raw_exchange(host, port, b"\xff\xff\xff\xffgarbage")
    assert b"bad_frame" in raw_exchange(host, port, struct.pack(">I", 5) + b"hello")
    assert b"bad_request" in raw_exchange(host, port, struct.pack(">I", 2) + b"[]")
    raw_exchange(host, port, struct.pack(">I", 100) + b"{")
    raw_exchange(host, port, b"\x00\x00")

    assert c.procs[leader].pid is not None, "the node died"
    hello = admin.call_sync(host, port, "hello", {})
    assert hello["tablets"]["0"]["status"] == "leader"
    (after,) = run(do_ops(c, [("get", ("small",))]))
    assert after.type == "ok" and after.value == 1

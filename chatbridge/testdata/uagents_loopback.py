"""What every uAgents reference peer of the tests shares (uagents 0.26.1, uagents-core 0.4.12).

Import it before anything from uagents: importing installs a socket guard that refuses any
connection or name lookup that is not loopback and reports it as a "blocked" event, so a
test fails if the reference library tries to reach the internet. Native clients (gRPC) do not
use Python sockets; the tests point their proxy variables at nothing reachable.

Events are printed as lines "PEER {json}" on stdout. The Almanac contract lookup (gRPC to the
internet) is switched off, and LoopbackAlmanacResolver resolves through an Almanac API only.
"""

import json
import socket

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def emit(event, **fields):
    print("PEER " + json.dumps({"event": event, **fields}), flush=True)


_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _host(h):
    return h.decode() if isinstance(h, bytes) else h


def guarded_getaddrinfo(host, *args, **kwargs):
    if host is not None and _host(host) not in LOOPBACK:
        emit("blocked", kind="getaddrinfo", host=_host(host))
        raise OSError(f"loopback guard: {_host(host)} is not loopback")
    return _getaddrinfo(host, *args, **kwargs)


def _check(addr):
    if isinstance(addr, tuple) and addr and _host(addr[0]) not in LOOPBACK:
        emit("blocked", kind="connect", host=str(addr[0]))
        raise OSError(f"loopback guard: {addr[0]} is not loopback")


def guarded_connect(self, addr):
    _check(addr)
    return _connect(self, addr)


def guarded_connect_ex(self, addr):
    _check(addr)
    return _connect_ex(self, addr)


socket.getaddrinfo = guarded_getaddrinfo
socket.socket.connect = guarded_connect
socket.socket.connect_ex = guarded_connect_ex

# Imported after the guard so nothing slips past it at import time.
import uagents.agent  # noqa: E402
from uagents import Agent  # noqa: E402
from uagents.registration import AlmanacApiRegistrationPolicy  # noqa: E402
from uagents.resolver import AlmanacApiResolver  # noqa: E402

# Agent() looks up the on-chain Almanac contract over gRPC (grpc-fetchhub.fetch.ai), which
# bypasses Python sockets. The test peers need no contract: registration and resolution go
# through the Almanac API on loopback.
uagents.agent.get_almanac_contract = lambda *args, **kwargs: None


class LoopbackAlmanacResolver(AlmanacApiResolver):
    """The Almanac API resolver without its on-chain (internet) fallback."""

    async def resolve(self, destination):
        return await self._api_resolve(destination)


def almanac_api(base):
    """The Almanac API under a loopback base URL."""
    return base.rstrip("/") + "/v1/almanac"


def loopback_agent(name, seed, port, base, loop=None):
    """An Agent served on a loopback port that registers and resolves only through the Almanac
    API under base, with the inspector and event reports off."""
    almanac = almanac_api(base)
    return Agent(
        name=name,
        seed=seed,
        port=port,
        endpoint=[f"http://127.0.0.1:{port}/submit"],
        agentverse=base,
        resolve=LoopbackAlmanacResolver(almanac_api_url=almanac),
        registration_policy=AlmanacApiRegistrationPolicy(almanac_api=almanac),
        enable_agent_inspector=False,
        report_events=False,
        log_level="WARNING",
        loop=loop,
    )

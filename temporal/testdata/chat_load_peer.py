"""Several uAgents reference agents (uagents 0.26.1) in one process, for the chat load test.

Each agent has its own seed and port, registers with the Almanac API of `signoff dev` (its
local registry on the loopback listener), and on startup sends one ChatMessage to the bridge
at the same moment as the others. It acknowledges every ChatMessage it receives. Events are
printed as lines "PEER {json}" with the agent's index; ack_ms is measured here, from just
before the send to the acknowledgement's arrival.

A socket guard refuses any connection or name lookup that is not loopback, and reports it.
The test sets NO_PROXY for loopback and points proxy variables at nothing reachable.
"""

import argparse
import asyncio
import json
import socket
import sys
import time
from datetime import datetime, timezone

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
        raise OSError(f"load guard: {_host(host)} is not loopback")
    return _getaddrinfo(host, *args, **kwargs)


def _check(addr):
    if isinstance(addr, tuple) and addr and _host(addr[0]) not in LOOPBACK:
        emit("blocked", kind="connect", host=str(addr[0]))
        raise OSError(f"load guard: {addr[0]} is not loopback")


def guarded_connect(self, addr):
    _check(addr)
    return _connect(self, addr)


def guarded_connect_ex(self, addr):
    _check(addr)
    return _connect_ex(self, addr)


socket.getaddrinfo = guarded_getaddrinfo
socket.socket.connect = guarded_connect
socket.socket.connect_ex = guarded_connect_ex

import uagents.agent  # noqa: E402
from uagents import Agent, Context, Protocol  # noqa: E402
from uagents.registration import AlmanacApiRegistrationPolicy  # noqa: E402
from uagents.resolver import AlmanacApiResolver  # noqa: E402
from uagents_core.contrib.protocols.chat import (  # noqa: E402
    ChatAcknowledgement,
    ChatMessage,
    TextContent,
    chat_protocol_spec,
)

# No on-chain Almanac contract (gRPC to the internet); registration goes to the API.
uagents.agent.get_almanac_contract = lambda *args, **kwargs: None


class LoopbackAlmanacResolver(AlmanacApiResolver):
    """The Almanac API resolver without its on-chain fallback."""

    async def resolve(self, destination):
        return await self._api_resolve(destination)


def make_agent(i, args, loop, go, started):
    almanac = args.base.rstrip("/") + "/v1/almanac"
    port = args.ports[i]
    agent = Agent(
        name=f"load-peer-{i}",
        seed=f"{args.seed_prefix} {i}",
        port=port,
        endpoint=[f"http://127.0.0.1:{port}/submit"],
        agentverse=args.base,
        resolve=LoopbackAlmanacResolver(almanac_api_url=almanac),
        registration_policy=AlmanacApiRegistrationPolicy(almanac_api=almanac),
        enable_agent_inspector=False,
        report_events=False,
        log_level="WARNING",
        loop=loop,
    )
    state = {"t0": None, "sent_id": None}
    proto = Protocol(spec=chat_protocol_spec)

    @agent.on_event("startup")
    async def start(ctx: Context):
        await agent.register()
        started[0] += 1
        emit("started", i=i, address=agent.address)
        await go.wait()  # every agent sends at the same moment
        msg = ChatMessage(content=[TextContent(text=args.text)])
        state["sent_id"] = str(msg.msg_id)
        state["t0"] = time.monotonic()
        status = await ctx.send(args.bridge, msg)
        emit("sent", i=i, msg_id=state["sent_id"], session=str(ctx.session), status=str(status.status.value))

    @proto.on_message(ChatAcknowledgement)
    async def on_ack(ctx: Context, sender: str, msg: ChatAcknowledgement):
        ms = (time.monotonic() - state["t0"]) * 1000 if state["t0"] else -1
        emit("ack", i=i, acknowledged=str(msg.acknowledged_msg_id), ack_ms=ms,
             matches=str(msg.acknowledged_msg_id) == state["sent_id"])

    @proto.on_message(ChatMessage)
    async def on_chat(ctx: Context, sender: str, msg: ChatMessage):
        emit("chat", i=i, msg_id=str(msg.msg_id), text=msg.text(), session=str(ctx.session))
        await ctx.send(sender, ChatAcknowledgement(acknowledged_msg_id=msg.msg_id, timestamp=datetime.now(timezone.utc)))

    agent.include(proto, publish_manifest=False)
    return agent


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True, help="loopback base URL serving /v1/almanac")
    p.add_argument("--bridge", required=True)
    p.add_argument("--ports", required=True, type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--seed-prefix", required=True)
    p.add_argument("--text", required=True)
    args = p.parse_args()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    go = asyncio.Event()
    started = [0]
    agents = [make_agent(i, args, loop, go, started) for i in range(len(args.ports))]

    async def release():
        # Started once every agent registered; then all send together.
        while True:
            await asyncio.sleep(0.05)
            if started[0] == len(agents):
                emit("go", n=len(agents))
                go.set()
                return

    loop.create_task(release())
    loop.run_until_complete(asyncio.gather(*(a.run_async() for a in agents)))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)

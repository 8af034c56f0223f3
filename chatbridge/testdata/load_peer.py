"""Several uAgents reference agents (uagents 0.26.1) in one process, for the chat load test
(temporal/chat_load_test.go).

Each agent has its own seed and port, registers with the Almanac API of `signoff dev` (its
local registry on the loopback listener), and on startup sends one ChatMessage to the bridge
at the same moment as the others. It acknowledges every ChatMessage it receives. Events are
printed as lines "PEER {json}" with the agent's index; ack_ms is measured here, from just
before the send to the acknowledgement's handler, and send_ms is how long the library's send
took (resolve, sign, POST). t0_wall and at_wall are the same two moments by the wall clock,
for the test to split the time against the bridge's own log.

With --capture I, agent I first sends "cancel" twice in its session, before the burst: once
with an envelope expiring in --capture-expiry-long seconds and once in --capture-expiry-short.
Each envelope is reported, as the library posted it, in a "captured" event, so the test can
post it again later (a replay). The agent waits for both acknowledgements and answers before
it counts as started. Events from then are marked phase "capture".

The loopback guard and the Almanac API resolver are shared with the interop peer
(uagents_loopback.py). The test sets NO_PROXY for loopback.
"""

import argparse
import asyncio
import json
import sys
import time
from datetime import datetime, timezone

# First: installs the loopback socket guard before uagents is imported.
from uagents_loopback import emit, loopback_agent  # noqa: I001

import uagents.communication  # noqa: E402
from uagents import Context, Protocol  # noqa: E402
from uagents_core.contrib.protocols.chat import (  # noqa: E402
    ChatAcknowledgement,
    ChatMessage,
    TextContent,
    chat_protocol_spec,
)

# The agent whose outgoing envelopes are reported (--capture); None: none.
CAPTURE = {"address": None}
_send_exchange_envelope = uagents.communication.send_exchange_envelope


async def capturing_send_exchange_envelope(envelope, endpoints, sync=False):
    # The library posts envelope.model_dump_json() as the body; that is what is reported.
    if envelope.sender == CAPTURE["address"]:
        payload = json.loads(envelope.decode_payload() or "{}")
        emit("captured", address=envelope.sender, msg_id=str(payload.get("msg_id", "")),
             expires=envelope.expires, envelope=envelope.model_dump_json())
    return await _send_exchange_envelope(envelope=envelope, endpoints=endpoints, sync=sync)


# The Dispenser looks the function up in the module at each send.
uagents.communication.send_exchange_envelope = capturing_send_exchange_envelope


def make_agent(i, args, loop, go, started):
    port = args.ports[i]
    agent = loopback_agent(f"load-peer-{i}", f"{args.seed_prefix} {i}", port, args.base, loop=loop)
    capturing = args.capture == i
    state = {"t0": None, "sent_id": None, "phase": "capture" if capturing else "burst",
             "capture_acks": 0, "capture_replies": 0, "captured": asyncio.Event()}
    proto = Protocol(spec=chat_protocol_spec)

    def capture_progress():
        if state["capture_acks"] >= 2 and state["capture_replies"] >= 2:
            state["captured"].set()

    @agent.on_event("startup")
    async def start(ctx: Context):
        await agent.register()
        if capturing:
            CAPTURE["address"] = agent.address
            for kind, expiry in (("long", args.capture_expiry_long), ("short", args.capture_expiry_short)):
                msg = ChatMessage(content=[TextContent(text="cancel")])
                status = await ctx.send(args.bridge, msg, timeout=expiry)
                emit("capture_sent", i=i, kind=kind, msg_id=str(msg.msg_id), session=str(ctx.session),
                     status=str(status.status.value), phase="capture")
            await state["captured"].wait()
            state["phase"] = "burst"
        started[0] += 1
        emit("started", i=i, address=agent.address)
        await go.wait()  # every agent sends at the same moment
        msg = ChatMessage(content=[TextContent(text=args.text)])
        state["sent_id"] = str(msg.msg_id)
        state["t0"] = time.monotonic()
        t0_wall = time.time()
        status = await ctx.send(args.bridge, msg)
        emit("sent", i=i, msg_id=state["sent_id"], session=str(ctx.session), status=str(status.status.value),
             send_ms=(time.monotonic() - state["t0"]) * 1000, t0_wall=t0_wall)

    @proto.on_message(ChatAcknowledgement)
    async def on_ack(ctx: Context, sender: str, msg: ChatAcknowledgement):
        ms = (time.monotonic() - state["t0"]) * 1000 if state["t0"] else -1
        emit("ack", i=i, acknowledged=str(msg.acknowledged_msg_id), ack_ms=ms, at_wall=time.time(),
             matches=str(msg.acknowledged_msg_id) == state["sent_id"], phase=state["phase"])
        if state["phase"] == "capture":
            state["capture_acks"] += 1
            capture_progress()

    @proto.on_message(ChatMessage)
    async def on_chat(ctx: Context, sender: str, msg: ChatMessage):
        emit("chat", i=i, msg_id=str(msg.msg_id), text=msg.text(), session=str(ctx.session), phase=state["phase"])
        await ctx.send(sender, ChatAcknowledgement(acknowledged_msg_id=msg.msg_id, timestamp=datetime.now(timezone.utc)))
        if state["phase"] == "capture":
            state["capture_replies"] += 1
            capture_progress()

    agent.include(proto, publish_manifest=False)
    return agent


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True, help="loopback base URL serving /v1/almanac")
    p.add_argument("--bridge", required=True)
    p.add_argument("--ports", required=True, type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--seed-prefix", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--capture", type=int, default=-1, help="index of the agent whose cancels are captured")
    p.add_argument("--capture-expiry-long", type=int, default=3600)
    p.add_argument("--capture-expiry-short", type=int, default=20)
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

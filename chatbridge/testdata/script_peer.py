"""uAgents reference agents (uagents 0.26.1) that the e2e test scripts: each line on stdin,
{"i": I, "text": T}, makes agent I send T to the bridge as a ChatMessage, in the conversation
(session) of the last message the bridge sent it, as a person answering in the same chat
would; before the bridge has said anything, in a session of its own. Every ChatMessage
received is acknowledged. Events are printed as lines "PEER {json}", as load_peer.py prints
them: started, sent, ack, chat.

The loopback guard and the Almanac API resolver come from uagents_loopback.py.
"""

import argparse
import asyncio
import json
import sys
from datetime import datetime, timezone

# First: installs the loopback socket guard before uagents is imported.
from uagents_loopback import emit, loopback_agent  # noqa: I001

from uagents import Context, Protocol  # noqa: E402
from uagents_core.contrib.protocols.chat import (  # noqa: E402
    ChatAcknowledgement,
    ChatMessage,
    TextContent,
    chat_protocol_spec,
)


def make_agent(i, args, loop, queue):
    port = args.ports[i]
    agent = loopback_agent(f"script-peer-{i}", f"{args.seed_prefix} {i}", port, args.base, loop=loop)
    state = {"ctx": None}  # the context of the bridge's last message: its conversation
    proto = Protocol(spec=chat_protocol_spec)

    @agent.on_event("startup")
    async def start(ctx: Context):
        await agent.register()
        emit("started", i=i, address=agent.address)

    @agent.on_interval(period=0.1)
    async def send(ctx: Context):
        while not queue.empty():
            text = queue.get_nowait()
            use = state["ctx"] or ctx
            msg = ChatMessage(content=[TextContent(text=text)])
            status = await use.send(args.bridge, msg)
            emit("sent", i=i, msg_id=str(msg.msg_id), session=str(use.session), status=str(status.status.value), text=text)

    @proto.on_message(ChatAcknowledgement)
    async def on_ack(ctx: Context, sender: str, msg: ChatAcknowledgement):
        emit("ack", i=i, acknowledged=str(msg.acknowledged_msg_id))

    @proto.on_message(ChatMessage)
    async def on_chat(ctx: Context, sender: str, msg: ChatMessage):
        state["ctx"] = ctx
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
    args = p.parse_args()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    queues = [asyncio.Queue() for _ in args.ports]
    agents = [make_agent(i, args, loop, queues[i]) for i in range(len(args.ports))]

    async def read_commands():
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            cmd = json.loads(line)
            queues[cmd["i"]].put_nowait(cmd["text"])

    loop.create_task(read_commands())
    loop.run_until_complete(asyncio.gather(*(a.run_async() for a in agents)))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)

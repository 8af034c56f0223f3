"""uAgents reference peer for chatbridge's interop test (uagents 0.26.1, uagents-core 0.4.12).

Started by interop_test.go with every Agentverse/Almanac URL pointed at a loopback stub (the Go
almanac.Registry). It registers itself there, publishes the chat manifest, sends one
ChatMessage to the Go bridge, checks the acknowledgement and the reply, and acknowledges every
ChatMessage it receives. Results are printed as lines "PEER {json}" on stdout.

The loopback guard and the Almanac API resolver come from uagents_loopback.py, which the
load test's peers share.
"""

import argparse
import sys
from datetime import datetime, timezone

# First: installs the loopback socket guard before uagents is imported.
from uagents_loopback import LoopbackAlmanacResolver, almanac_api, emit, loopback_agent  # noqa: I001

from uagents import Context, Protocol  # noqa: E402
from uagents.communication import send_sync_message  # noqa: E402
from uagents_core.contrib.protocols.chat import (  # noqa: E402
    ChatAcknowledgement,
    ChatMessage,
    TextContent,
    chat_protocol_spec,
)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stub", required=True, help="loopback Agentverse/Almanac stub base URL")
    p.add_argument("--bridge", required=True, help="address of the Go bridge")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--seed", required=True)
    p.add_argument("--text", default="hello from the python reference")
    args = p.parse_args()
    agent = loopback_agent("interop-peer", args.seed, args.port, args.stub)
    state = {"sent_id": None, "session": None, "synced": False}
    proto = Protocol(spec=chat_protocol_spec)

    @agent.on_event("startup")
    async def start(ctx: Context):
        emit("started", address=agent.address)
        # Register before talking so the bridge can resolve where to answer.
        await agent.register()
        msg = ChatMessage(content=[TextContent(text=args.text)])
        state["sent_id"] = str(msg.msg_id)
        state["session"] = str(ctx.session)
        status = await ctx.send(args.bridge, msg)
        emit("sent", msg_id=state["sent_id"], session=state["session"], status=str(status.status.value), detail=status.detail)

    @proto.on_message(ChatAcknowledgement)
    async def on_ack(ctx: Context, sender: str, msg: ChatAcknowledgement):
        emit(
            "ack",
            sender=sender,
            acknowledged=str(msg.acknowledged_msg_id),
            session=str(ctx.session),
            matches=str(msg.acknowledged_msg_id) == state["sent_id"] and str(ctx.session) == state["session"],
        )

    @proto.on_message(ChatMessage)
    async def on_chat(ctx: Context, sender: str, msg: ChatMessage):
        emit("chat", sender=sender, msg_id=str(msg.msg_id), text=msg.text(), session=str(ctx.session),
             in_session=str(ctx.session) == state["session"])
        await ctx.send(sender, ChatAcknowledgement(acknowledged_msg_id=msg.msg_id, timestamp=datetime.now(timezone.utc)))
        emit("acked", msg_id=str(msg.msg_id))
        if not state["synced"] and msg.text() == "Go bridge got: " + args.text:
            # The library's synchronous send: the answer comes back on the same connection,
            # and the library verifies its signature before returning it.
            state["synced"] = True
            sync_msg = ChatMessage(content=[TextContent(text="sync " + args.text)])
            resp = await send_sync_message(
                args.bridge, sync_msg, response_type=ChatAcknowledgement, sender=agent._identity,
                resolver=LoopbackAlmanacResolver(almanac_api_url=almanac_api(args.stub)),
            )
            if isinstance(resp, ChatAcknowledgement):
                emit("sync", status="acknowledged", msg_id=str(sync_msg.msg_id), acknowledged=str(resp.acknowledged_msg_id))
            else:
                emit("sync", status=str(getattr(getattr(resp, "status", None), "value", resp)), msg_id=str(sync_msg.msg_id),
                     text=str(getattr(resp, "detail", "")))

    agent.include(proto, publish_manifest=True)
    agent.run()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)

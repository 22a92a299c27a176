// The ACP peer's agent: an Agent Client Protocol agent on @agentclientprotocol/sdk over stdio that, on
// session/prompt "flood N", sends N agent_message_chunk session/update notifications whose lines are 200 bytes
// each, awaiting each notify as an agent streaming a reply does, then ends the turn.
import { Readable, Writable } from "node:stream";
import { agent, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { padFor } from "../lib/frames.js";

const SESSION = "acp-flood";
const update = (text: string) => ({
  sessionUpdate: "agent_message_chunk" as const,
  content: { type: "text" as const, text },
});
const pad = padFor((text) => ({
  jsonrpc: "2.0",
  method: "session/update",
  params: { sessionId: SESSION, update: update(text) },
}));

const app = agent({ name: "acp-flood" })
  .onRequest(methods.agent.initialize, async ({ params }) => ({
    protocolVersion: Math.min(params.protocolVersion, PROTOCOL_VERSION),
    agentCapabilities: {},
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, async () => ({ sessionId: SESSION }))
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const first = params.prompt[0];
    const n = Number(first?.type === "text" ? first.text.split(/\s+/)[1] : 0);
    for (let i = 0; i < n; i++) {
      await client.notify(methods.client.session.update, { sessionId: SESSION, update: update(pad) });
    }
    return { stopReason: "end_turn" as const };
  });

const stream = ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
);
await app.connect(stream).closed;
process.exit(0);

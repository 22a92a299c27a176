// Events of a newer version of a provider's API than its SDK package knows: Anthropic adds event, content block
// and delta types within one API version and asks clients to ignore the ones they do not know. Such an event is
// passed over with a warning naming it; the answer around it is whole, and the turn completes.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, textOf } from "../../testing/brain.js";
import { apiTestBed } from "./testing/bed.js";

const bed = apiTestBed();

const event = (type: string, payload: object) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
const delta = (index: number, d: object) => event("content_block_delta", { index, delta: d });
const anthropic = [
  event("message_start", {
    message: {
      id: "msg_newer",
      type: "message",
      role: "assistant",
      model: "fake-model",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 7, output_tokens: 1 },
    },
  }),
  event("brand_new_event", { detail: { anything: 1 } }),
  event("content_block_start", { index: 0, content_block: { type: "future_block", data: "x" } }),
  delta(0, { type: "future_block_delta", data: "y" }),
  event("content_block_stop", { index: 0 }),
  event("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
  delta(1, { type: "text_delta", text: "hello " }),
  delta(1, { type: "future_delta", data: "z" }),
  delta(1, { type: "text_delta", text: "world" }),
  delta(1, { type: "future_delta", data: "z" }),
  event("content_block_stop", { index: 1 }),
  event("message_delta", {
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: 5 },
  }),
  event("message_stop", {}),
].join("");

let body = anthropic;
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(body);
});
beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A session on the server above, prompted once while the server sends `sent`. */
async function promptedWith(sent: string) {
  body = sent;
  try {
    const session = await bed.sessionAt(
      "anthropic",
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    return { session, outcome: await (await session.prompt("x")).settled };
  } finally {
    body = anthropic;
  }
}
/** The warnings of a log that say an event was not known. */
const unknownSaid = (all: Awaited<ReturnType<typeof events>>) =>
  all
    .filter((e) => e.type === "harness.warning")
    .map((e) => (e.data as { message: string }).message)
    .filter((m) => m.includes("does not know"));

describe("anthropic streaming event, block and delta types its SDK package does not know", () => {
  it("passes over them, saying which once, and completes the turn with the answer around them", async () => {
    const { session, outcome } = await promptedWith(anthropic);
    expect(outcome).toMatchObject({ status: "completed" });
    const all = await events(session);
    expect(textOf(all)).toBe("hello world");
    const message = all.find((e) => e.type === "assistant.message")?.data;
    expect(message).toMatchObject({
      text: "hello world",
      stop_reason: "stop",
      usage: { input: 7, output: 5 },
    });
    expect(unknownSaid(all)).toEqual([
      "anthropic sent a stream event this version of Brain does not know (brand_new_event); passed over it",
      'anthropic sent a stream event this version of Brain does not know (content_block_start of content_block.type "future_block"); passed over it',
      'anthropic sent a stream event this version of Brain does not know (content_block_delta of delta.type "future_block_delta"); passed over it',
      'anthropic sent a stream event this version of Brain does not know (content_block_delta of delta.type "future_delta"); passed over it',
    ]);
  });

  it("passes over one that comes first, before message_start, which the package reads before it hands the stream on", async () => {
    // Line ends as SSE allows them too: a prelude of "\r\n" and "\r", a ping and a comment the package passes over.
    const first = event("brand_new_prelude", { detail: 1 }).replace(/\n/g, "\r\n");
    const { session, outcome } = await promptedWith(
      `: hello\r\r${event("ping", {})}${first}${event("another_new_one", {}).replace(/\n/g, "\r")}${anthropic}`,
    );
    expect(outcome).toMatchObject({ status: "completed" });
    const all = await events(session);
    expect(textOf(all)).toBe("hello world");
    expect(unknownSaid(all).slice(0, 3)).toEqual([
      "anthropic sent a stream event this version of Brain does not know (brand_new_prelude); passed over it",
      "anthropic sent a stream event this version of Brain does not know (another_new_one); passed over it",
      "anthropic sent a stream event this version of Brain does not know (brand_new_event); passed over it",
    ]);
  });

  it("fails on a first event of a type it knows in a shape it does not, saying what it was sent", async () => {
    const { outcome } = await promptedWith(
      anthropic.replace(`"usage":{"input_tokens":7,"output_tokens":1}`, `"usage":"none"`),
    );
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toMatch(
      /^anthropic model "fake-model" sent a stream event that is not in the form of its API: \{"type":"message_start"/,
    );
  });

  it("still fails on an event of a type it knows in a shape it does not (no usage in message_delta)", async () => {
    const { outcome } = await promptedWith(
      anthropic.replace(`"usage":{"output_tokens":5}`, `"usage":"none"`),
    );
    expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(outcome.error?.message).toMatch(
      /^anthropic model "fake-model" sent a stream event that is not in the form of its API: \{"type":"message_delta"/,
    );
  });
});

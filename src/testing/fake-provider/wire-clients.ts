// Independent clients of the fake provider's three wire formats, for its tests: each builds a request body,
// decodes a JSON or streamed answer on its own (never with the provider's encoder), and names its stop reasons.
import { expect } from "vitest";
export interface Decoded {
  text: string;
  toolCalls: { id: string; name: string; args: unknown }[];
  stop: string;
  usage: { input: number; output: number };
}

export interface Frame {
  event?: string;
  data: string;
}

/** A deliberately independent SSE parser, so the tests check the bytes on the wire, not our own encoder. */
export function parseSse(text: string): Frame[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const frame: Frame = { data: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) frame.event = line.slice(7);
        if (line.startsWith("data: ")) frame.data += line.slice(6);
      }
      return frame;
    });
}

// biome-ignore lint/suspicious/noExplicitAny: decoded wire JSON
export type Json = any;

/** How a client of each wire format builds a request and reassembles what comes back. */
export interface Client {
  format: "openai-chat" | "anthropic" | "openai-responses";
  path: string;
  auth(key: string): Record<string, string>;
  body(prompt: string, stream: boolean): object;
  decodeStream(frames: Frame[]): Decoded;
  decodeJson(body: Json): Decoded;
  errorOf(body: Json): { type: string; message: string };
}

export const openaiChat: Client = {
  format: "openai-chat",
  path: "/v1/chat/completions",
  auth: (key) => ({ authorization: `Bearer ${key}` }),
  body: (prompt, stream) => ({
    model: "gpt-test",
    messages: [
      { role: "system", content: "be brief" },
      { role: "user", content: prompt },
    ],
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  }),
  decodeStream(frames) {
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const out: Decoded = { text: "", toolCalls: [], stop: "", usage: { input: 0, output: 0 } };
    const args: string[] = [];
    for (const frame of frames.slice(0, -1)) {
      const chunk = JSON.parse(frame.data);
      expect(chunk.object).toBe("chat.completion.chunk");
      if (chunk.usage)
        out.usage = { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.finish_reason) out.stop = choice.finish_reason;
      if (typeof choice.delta.content === "string") out.text += choice.delta.content;
      for (const call of choice.delta.tool_calls ?? []) {
        if (call.id) {
          expect(call.type).toBe("function");
          out.toolCalls[call.index] = { id: call.id, name: call.function.name, args: undefined };
          args[call.index] = "";
        }
        args[call.index] += call.function.arguments ?? "";
      }
    }
    for (const [i, call] of out.toolCalls.entries()) call.args = JSON.parse(args[i]!);
    return out;
  },
  decodeJson(body) {
    const choice = body.choices[0];
    return {
      text: choice.message.content ?? "",
      toolCalls: (choice.message.tool_calls ?? []).map((c: Json) => ({
        id: c.id,
        name: c.function.name,
        args: JSON.parse(c.function.arguments),
      })),
      stop: choice.finish_reason,
      usage: { input: body.usage.prompt_tokens, output: body.usage.completion_tokens },
    };
  },
  errorOf: (body) => body.error,
};

export const anthropic: Client = {
  format: "anthropic",
  path: "/v1/messages",
  auth: (key) => ({ "x-api-key": key }),
  body: (prompt, stream) => ({
    model: "claude-test",
    max_tokens: 100,
    system: "be brief",
    messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
    stream,
  }),
  decodeStream(frames) {
    const out: Decoded = { text: "", toolCalls: [], stop: "", usage: { input: 0, output: 0 } };
    const blocks: Json[] = [];
    for (const frame of frames) {
      const event = JSON.parse(frame.data);
      expect(event.type).toBe(frame.event);
      if (event.type === "message_start") out.usage.input = event.message.usage.input_tokens;
      if (event.type === "content_block_start") blocks[event.index] = { ...event.content_block, json: "" };
      if (event.type === "content_block_delta") {
        const block = blocks[event.index];
        if (event.delta.type === "text_delta") out.text += event.delta.text;
        if (event.delta.type === "input_json_delta") block.json += event.delta.partial_json;
      }
      if (event.type === "message_delta") {
        out.stop = event.delta.stop_reason;
        out.usage.output = event.usage.output_tokens;
      }
    }
    expect(frames[0]?.event).toBe("message_start");
    expect(frames.at(-1)?.event).toBe("message_stop");
    for (const block of blocks.filter((b) => b.type === "tool_use")) {
      out.toolCalls.push({ id: block.id, name: block.name, args: JSON.parse(block.json) });
    }
    return out;
  },
  decodeJson(body) {
    return {
      text: body.content
        .filter((b: Json) => b.type === "text")
        .map((b: Json) => b.text)
        .join(""),
      toolCalls: body.content
        .filter((b: Json) => b.type === "tool_use")
        .map((b: Json) => ({ id: b.id, name: b.name, args: b.input })),
      stop: body.stop_reason,
      usage: { input: body.usage.input_tokens, output: body.usage.output_tokens },
    };
  },
  errorOf: (body) => {
    expect(body.type).toBe("error");
    return body.error;
  },
};

export const openaiResponses: Client = {
  format: "openai-responses",
  path: "/v1/responses",
  auth: (key) => ({ authorization: `Bearer ${key}` }),
  body: (prompt, stream) => ({
    model: "gpt-test",
    instructions: "be brief",
    input: [{ role: "user", content: [{ type: "input_text", text: prompt }] }],
    stream,
  }),
  decodeStream(frames) {
    const out: Decoded = { text: "", toolCalls: [], stop: "", usage: { input: 0, output: 0 } };
    const args = new Map<string, string>();
    const events = frames.map((f) => JSON.parse(f.data));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    for (const event of events) {
      if (event.type === "response.output_text.delta") out.text += event.delta;
      if (event.type === "response.function_call_arguments.delta") {
        args.set(event.item_id, (args.get(event.item_id) ?? "") + event.delta);
      }
      if (event.type === "response.output_item.done" && event.item.type === "function_call") {
        expect(args.get(event.item.id)).toBe(event.item.arguments);
        const argsText = args.get(event.item.id) ?? "";
        out.toolCalls.push({ id: event.item.call_id, name: event.item.name, args: JSON.parse(argsText) });
      }
      if (event.type === "response.completed") {
        out.stop = event.response.output.some((i: Json) => i.type === "function_call")
          ? "tool_calls"
          : "stop";
        out.usage = { input: event.response.usage.input_tokens, output: event.response.usage.output_tokens };
      }
    }
    expect(events[0]?.type).toBe("response.created");
    expect(events.at(-1)?.type).toBe("response.completed");
    return out;
  },
  decodeJson(body) {
    const out: Decoded = { text: "", toolCalls: [], stop: "stop", usage: { input: 0, output: 0 } };
    for (const item of body.output) {
      if (item.type === "message") out.text += item.content.map((c: Json) => c.text).join("");
      if (item.type === "function_call") {
        out.toolCalls.push({ id: item.call_id, name: item.name, args: JSON.parse(item.arguments) });
        out.stop = "tool_calls";
      }
    }
    out.usage = { input: body.usage.input_tokens, output: body.usage.output_tokens };
    return out;
  },
  errorOf: (body) => body.error,
};

export const STOP = {
  "openai-chat": { text: "stop", tools: "tool_calls" },
  anthropic: { text: "end_turn", tools: "tool_use" },
  "openai-responses": { text: "stop", tools: "tool_calls" },
};

// One table of provider api names serves the four CLI families: each reads the names it speaks, a bare
// "openai" as its own OpenAI default, and refuses the rest naming what it does speak.
import { describe, expect, it } from "vitest";
import { providerWire, type WireRules } from "./provider-api.js";

const family = { harness: "some-cli", program: "some", title: "Some CLI" };
const all: WireRules = { speaks: ["chat", "responses", "messages"], openai: "chat" };

describe("providerWire", () => {
  it("maps every alias to its wire, an unset api to the family's first", () => {
    expect(providerWire(family, undefined, all)).toBe("chat");
    for (const api of ["openai", "openai-chat", "openai-completions", "chat"])
      expect(providerWire(family, api, all)).toBe("chat");
    for (const api of ["openai-responses", "responses"])
      expect(providerWire(family, api, all)).toBe("responses");
    for (const api of ["anthropic", "anthropic-messages", "messages"])
      expect(providerWire(family, api, all)).toBe("messages");
  });

  it('reads a bare "openai" as the family\'s OpenAI default', () => {
    expect(providerWire(family, "openai", { speaks: ["responses"], openai: "responses" })).toBe("responses");
    expect(() => providerWire(family, "openai", { speaks: ["messages"], openai: "chat" })).toThrow(
      /speaks only the Anthropic Messages API, but the provider's api is "openai"/,
    );
  });

  it("refuses an api the family cannot speak, listing the names it can", () => {
    expect(() => providerWire(family, "gemini", all)).toThrow(
      'some-cli: the provider\'s api "gemini" is not one some speaks; use one of openai, openai-chat, ' +
        "openai-completions, chat, openai-responses, responses, anthropic, anthropic-messages, messages",
    );
    expect(() => providerWire(family, "chat", { speaks: ["responses"], openai: "responses" })).toThrow(
      'some-cli: Some CLI speaks only the OpenAI Responses API, but the provider\'s api is "chat"; ' +
        'use "openai-responses" (or leave it out) with a Responses-compatible base_url',
    );
  });
});

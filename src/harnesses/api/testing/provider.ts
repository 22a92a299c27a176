// Test wiring for the api harness: a fake provider that demands a key, and a Brain whose sessions reach it
// through the real AI SDK provider packages. Used by the tests beside it and by the benchmarks.
import type { ProviderCredentials } from "../../../protocol/runner.js";
import { type FakeProvider, startFakeProvider } from "../../../testing/fake-provider/index.js";

export const FAKE_KEY = "sk-fake-api-harness";

/** The base URL each provider's SDK package wants for the fake provider. */
export function baseUrlFor(provider: string, fake: Pick<FakeProvider, "url">): string {
  if (provider === "gemini") return `${fake.url}/v1beta`;
  if (provider === "ollama") return `${fake.url}/api`;
  return `${fake.url}/v1`;
}

export function credentialsFor(provider: string, fake: Pick<FakeProvider, "url">): ProviderCredentials {
  return { api_key: FAKE_KEY, base_url: baseUrlFor(provider, fake) };
}

export function startKeyedProvider(): Promise<FakeProvider> {
  return startFakeProvider({ apiKey: FAKE_KEY });
}

/** Every provider the harness speaks, with the wire format the fake provider sees for it. */
export const PROVIDER_FORMATS = {
  anthropic: "anthropic",
  openai: "openai-responses",
  "openai-chat": "openai-chat",
  gemini: "gemini",
  openrouter: "openai-chat",
  ollama: "ollama",
  "openai-compatible": "openai-chat",
} as const;

/** The Anthropic messages of a logged request, as role + plain text. */
export function transcript(body: { messages: { role: string; content: unknown }[] }): string[] {
  return body.messages.map((m) => {
    const parts = Array.isArray(m.content) ? m.content : [{ type: "text", text: m.content }];
    const text = parts
      .map((p: { type: string; text?: string; content?: unknown; name?: string }) =>
        p.type === "text" ? p.text : p.type === "tool_use" ? `[call ${p.name}]` : `[${p.type}]`,
      )
      .join(" ");
    return `${m.role}: ${text}`;
  });
}

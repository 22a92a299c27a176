// runners/pi behind a Brain on a throwaway home, pointed at the fake provider in one of the three wire formats.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Session } from "../../src/core/session.js";
import { ProcessFactory } from "../../src/harnesses/process/factory.js";
import type { ProviderCredentials, ToolResult, ToolSchema } from "../../src/protocol/runner.js";
import { makeBrain, type TestBrain } from "../../src/testing/brain.js";
import {
  type FakeProvider,
  type FakeProviderRequest,
  startFakeProvider,
} from "../../src/testing/fake-provider/index.js";
import { type ToolService, textResult } from "../../src/tools/tool-service.js";

export const ROOT = join(import.meta.dirname, "../..");
/** The command the seed names: the generated entry that starts the compiled runner. */
export const PI_RUNNER = join(ROOT, "runners/pi/dist/main.js");
export const API_KEY = "sk-fake-pi-runner-key";

export interface WireFormat {
  api: "openai-completions" | "openai-responses" | "anthropic-messages";
  model: string;
  path: string;
  baseUrl(fake: FakeProvider): string;
}

export const FORMATS: WireFormat[] = [
  {
    api: "openai-completions",
    model: "openai/fake-model",
    path: "/v1/chat/completions",
    baseUrl: (f) => `${f.url}/v1`,
  },
  {
    api: "openai-responses",
    model: "openai/fake-model",
    path: "/v1/responses",
    baseUrl: (f) => `${f.url}/v1`,
  },
  // Anthropic's SDK appends /v1/messages itself; the runner accepts a base URL with or without /v1.
  { api: "anthropic-messages", model: "anthropic/fake-model", path: "/v1/messages", baseUrl: (f) => f.url },
];

export function piFactory(): ProcessFactory {
  return new ProcessFactory({ name: "pi", command: process.execPath, args: [PI_RUNNER] });
}

export function piBrain(
  fake: FakeProvider,
  format: WireFormat,
  options: { tools?: ToolService[]; provider?: Partial<ProviderCredentials>; home?: string } = {},
): TestBrain {
  const provider: ProviderCredentials = {
    api_key: API_KEY,
    base_url: format.baseUrl(fake),
    api: format.api,
    ...options.provider,
  };
  return makeBrain({
    factories: [piFactory()],
    provider,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.home ? { home: options.home } : {}),
  });
}

/** The runner's transcript of a session, one parsed entry per line. */
export function transcript(t: TestBrain, session: Session): Record<string, unknown>[] {
  const text = readFileSync(join(t.store.paths(session.id).native, "conversation.jsonl"), "utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What identifies a model request's context: where it went and its whole body. */
export function requestShape(request: FakeProviderRequest) {
  return { path: request.path, body: request.body };
}

export function bodyText(request: FakeProviderRequest | undefined): string {
  return JSON.stringify(request?.body ?? null);
}

/** A tool that answers only when its call is cancelled (the turn was interrupted). */
export class WaitTool implements ToolService {
  async list(): Promise<ToolSchema[]> {
    return [{ name: "wait", description: "Waits.", input_schema: { type: "object", properties: {} } }];
  }
  call(_name: string, _args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    return new Promise((resolve) => {
      const done = () => resolve(textResult("wait was cancelled", true));
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    });
  }
}

/**
 * The fake provider of a test file (started once; `setup` gives it fallbacks) and the Brains its tests make with
 * `brain(format)`: each cleaned up, and the provider's record reset, after its test.
 */
export function usePiBed(setup?: (fake: FakeProvider) => void): {
  readonly fake: FakeProvider;
  brain(format: WireFormat, options?: Parameters<typeof piBrain>[2]): TestBrain;
} {
  let fake: FakeProvider | undefined;
  const made: TestBrain[] = [];
  beforeAll(async () => {
    fake = await startFakeProvider({ apiKey: API_KEY });
    setup?.(fake);
  });
  afterAll(async () => {
    await fake?.close();
  });
  afterEach(async () => {
    for (const t of made.splice(0)) await t.cleanup();
    fake?.reset();
  });
  return {
    get fake() {
      if (!fake) throw new Error("the fake provider starts in beforeAll: use it inside a test");
      return fake;
    },
    brain(format, options) {
      const t = piBrain(this.fake, format, options);
      made.push(t);
      return t;
    },
  };
}

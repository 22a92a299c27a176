// The api harness's test bed: one keyed fake provider per test file, and a fresh Brain per test that reaches it
// through the real AI SDK packages, cleaned up after each test. Call `apiTestBed()` at a test file's top level.
import { afterAll, afterEach, beforeAll } from "vitest";
import type { BrainOptions } from "../../../core/brain.js";
import type { HarnessFactory } from "../../../core/harness.js";
import type { Session } from "../../../core/session.js";
import type { ToolService } from "../../../core/tools.js";
import { makeBrain, type TestBrain } from "../../../testing/brain.js";
import type { FakeProvider } from "../../../testing/fake-provider/index.js";
import { ApiHarnessFactory } from "../factory.js";
import { baseUrlFor, credentialsFor, FAKE_KEY, startKeyedProvider } from "./provider.js";

export interface ApiTestBed {
  /** The fake provider (set once the file's tests start). */
  readonly fake: FakeProvider;
  /**
   * A Brain with the api harness (and `factories` beside it), its credentials for `provider` (default anthropic)
   * on the fake provider.
   */
  brain(options?: {
    home?: string;
    tools?: ToolService[];
    provider?: string;
    factories?: HarnessFactory[];
    /** The session tool services (MCP servers) of sessions that name some. */
    sessionTools?: BrainOptions["sessionTools"];
  }): TestBrain;
  /**
   * A session on `provider:fake-model` with no retries, its provider's base URL at `url` (a server of the test's
   * own, standing in for the provider or a proxy before it).
   */
  sessionAt(provider: string, url: string): Promise<Session>;
  /** The Brain this test made last (cleaned up after it, with the others it made). */
  readonly current: TestBrain;
  /** Cleans up `brain` after this test instead (one made another way). */
  use(brain: TestBrain): TestBrain;
  /** The test cleaned up its Brain itself. */
  forget(): void;
}

export function apiTestBed(): ApiTestBed {
  let fake: FakeProvider | undefined;
  // Every Brain a test made, the last one `current`: all are cleaned up after it.
  const made: TestBrain[] = [];
  beforeAll(async () => {
    fake = await startKeyedProvider();
  });
  afterEach(async () => {
    for (const brain of made.splice(0)) await brain.cleanup();
    fake?.reset();
  });
  afterAll(() => fake?.close());
  return {
    get fake() {
      if (!fake) throw new Error("apiTestBed: the fake provider starts in beforeAll; use it inside a test");
      return fake;
    },
    brain(options = {}) {
      return this.use(
        makeBrain({
          factories: [new ApiHarnessFactory(), ...(options.factories ?? [])],
          provider: credentialsFor(options.provider ?? "anthropic", this.fake),
          ...(options.tools ? { tools: options.tools } : {}),
          ...(options.home ? { home: options.home } : {}),
          ...(options.sessionTools ? { sessionTools: options.sessionTools } : {}),
        }),
      );
    },
    sessionAt(provider, url) {
      const t = this.use(
        makeBrain({
          factories: [new ApiHarnessFactory()],
          provider: { api_key: FAKE_KEY, base_url: baseUrlFor(provider, { url }) },
        }),
      );
      return t.brain.create({
        harness: "api",
        config: { model: `${provider}:fake-model`, options: { retries: 0 } },
      });
    },
    get current() {
      const current = made.at(-1);
      if (!current) throw new Error("apiTestBed: this test made no Brain yet");
      return current;
    },
    use(brain) {
      made.push(brain);
      return brain;
    },
    forget() {
      made.pop();
    },
  };
}

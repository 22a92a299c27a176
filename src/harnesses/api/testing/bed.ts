// The api harness's test bed: one keyed fake provider per test file, and a fresh Brain per test that reaches it
// through the real AI SDK packages, cleaned up after each test. Call `apiTestBed()` at a test file's top level.
import { afterAll, afterEach, beforeAll } from "vitest";
import type { HarnessFactory } from "../../../core/harness.js";
import type { ToolService } from "../../../core/tools.js";
import { makeBrain, type TestBrain } from "../../../testing/brain.js";
import type { FakeProvider } from "../../../testing/fake-provider/index.js";
import { ApiHarnessFactory } from "../factory.js";
import { credentialsFor, startKeyedProvider } from "./provider.js";

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
  }): TestBrain;
  /** The Brain this test made last (cleaned up after it). */
  readonly current: TestBrain;
  /** Cleans up `brain` after this test instead (one made another way). */
  use(brain: TestBrain): TestBrain;
  /** The test cleaned up its Brain itself. */
  forget(): void;
}

export function apiTestBed(): ApiTestBed {
  let fake: FakeProvider | undefined;
  let current: TestBrain | undefined;
  beforeAll(async () => {
    fake = await startKeyedProvider();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
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
        }),
      );
    },
    get current() {
      if (!current) throw new Error("apiTestBed: this test made no Brain yet");
      return current;
    },
    use(brain) {
      current = brain;
      return brain;
    },
    forget() {
      current = undefined;
    },
  };
}

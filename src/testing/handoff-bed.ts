// A Brain with several harness families on one fake provider: the api harness in process, the real CLIs in a
// loopback-only network namespace. For handoffs between families and rebuilds (issue 17).
import { afterEach } from "vitest";
import type { HarnessFactory } from "../core/harness.js";
import type { TestBrain } from "./brain.js";
import { sandboxBrain } from "./cli.js";
import type { FakeProviderRequest } from "./fake-provider/index.js";
import type { SandboxedProvider } from "./netns/sandbox.js";

export interface HandoffBed {
  sandbox: SandboxedProvider;
  t: TestBrain;
  restart(): Promise<TestBrain>;
  /** The requests the model got from `before` on (an index into the request log). */
  since(before: number): FakeProviderRequest[];
  close(): Promise<void>;
}

export async function handoffBed(
  factories: (launcher: string[]) => HarnessFactory[],
  path = "",
): Promise<HandoffBed> {
  const base = await sandboxBrain({ home: "brain-handoff-", factories, provider: { path } });
  return {
    sandbox: base.sandbox,
    get t() {
      return base.t;
    },
    restart: () => base.restart(),
    since: (before) => base.sandbox.provider.requests.slice(before),
    close: () => base.close(),
  };
}

/** `start()` opens a bed on these families for the calling test file's test, closed after it. */
export function useHandoffBed(
  factories: (launcher: string[]) => HarnessFactory[],
  path = "",
): () => Promise<HandoffBed> {
  let bed: HandoffBed | undefined;
  afterEach(async () => {
    await bed?.close();
    bed = undefined;
  });
  return async () => {
    bed = await handoffBed(factories, path);
    return bed;
  };
}

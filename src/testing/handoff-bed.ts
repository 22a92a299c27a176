// A Brain with several harness families on one fake provider: the api harness in process, the real CLIs in a
// loopback-only network namespace. For handoffs between families and rebuilds (issue 17).
import { rmSync } from "node:fs";
import type { HarnessFactory } from "../core/harness.js";
import { makeBrain, type TestBrain, tempDir } from "./brain.js";
import { FAKE_KEY } from "./cli.js";
import { type FakeProviderRequest, shellAgent } from "./fake-provider/index.js";
import { type SandboxedProvider, startSandboxedProvider } from "./netns/sandbox.js";

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
  const sandbox = await startSandboxedProvider();
  sandbox.provider.setFallback(shellAgent({ slowDelayMs: 100 }));
  const home = tempDir("brain-handoff-");
  const provider = { base_url: `${sandbox.provider.url}${path}`, api_key: FAKE_KEY };
  const build = () => makeBrain({ home, factories: factories(sandbox.launcher), provider });
  const bed: HandoffBed = {
    sandbox,
    t: build(),
    async restart() {
      await bed.t.brain.close();
      bed.t = build();
      return bed.t;
    },
    since: (before) => sandbox.provider.requests.slice(before),
    async close() {
      await bed.t.cleanup();
      await sandbox.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
  return bed;
}

// The harness that runs in the sandbox, unchanged, with the container released after it closes.
import type { ExpectedHistory, Harness, PromptOutcome, TurnContext } from "../../core/harness.js";
import type { NativeFile } from "../../protocol/runner.js";

export class SandboxedHarness implements Harness {
  constructor(
    private readonly inner: Harness,
    private readonly release: () => Promise<void>,
  ) {}

  prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    return this.inner.prompt(text, ctx);
  }

  steer(text: string, turn: string): Promise<void> {
    return this.inner.steer(text, turn);
  }

  interrupt(turn: string): Promise<void> {
    return this.inner.interrupt(turn);
  }

  checkpoint(): Promise<NativeFile[]> {
    return this.inner.checkpoint();
  }

  async close(): Promise<void> {
    await this.inner.close().catch(() => {});
    await this.release();
  }

  isAlive(): boolean {
    return this.inner.isAlive?.() ?? true;
  }

  /** The inner harness checks its own native state: left out here, a wrapped CLI would resume unchecked. */
  async verify(expected: ExpectedHistory): Promise<string | undefined> {
    return this.inner.verify?.(expected);
  }
}

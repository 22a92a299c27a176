// A harness that runs inside a container (the docker sandbox's, or a dev container), unchanged: what it does
// is the inner harness's, and the container is released once the harness has closed (whether or not it closed
// cleanly). A dev container keeps the inner harness's native files under a folder of its own (`nativeDir`).
import type { ExpectedHistory, Harness, PromptOutcome, Steering, TurnContext } from "../core/harness.js";
import type { NativeFile } from "../protocol/runner.js";

export class ContainedHarness implements Harness {
  /** `steeringOf`: the inner harness's, when the container's factory runs more than one kind (a dev container). */
  constructor(
    private readonly inner: Harness,
    private readonly release: () => Promise<void>,
    private readonly nativeDir?: string,
    readonly steeringOf?: Steering,
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

  get cancelsToolsAfterInterrupt(): boolean | undefined {
    return this.inner.cancelsToolsAfterInterrupt;
  }

  async checkpoint(): Promise<NativeFile[]> {
    const files = await this.inner.checkpoint();
    const dir = this.nativeDir;
    return dir === undefined ? files : files.map((file) => ({ ...file, path: `${dir}/${file.path}` }));
  }

  checkpointed(files: NativeFile[]): void {
    const dir = this.nativeDir;
    const inner =
      dir === undefined ? files : files.map((f) => ({ ...f, path: f.path.slice(dir.length + 1) }));
    this.inner.checkpointed?.(inner);
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

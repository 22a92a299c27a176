// A harness that runs inside a container (the docker sandbox's, or a dev container), unchanged: what it does
// is the inner harness's, and the container is released once the harness has closed (whether or not it closed
// cleanly). A dev container keeps the inner harness's native files under a folder of its own (`nativeDir`).
import {
  type ExpectedHistory,
  type Harness,
  HarnessError,
  type PromptOutcome,
  type Steering,
  type TurnContext,
} from "../core/harness.js";
import type { NativeFile } from "../protocol/runner.js";
import type { Container } from "./http/container.js";

export interface Contained {
  /** Where a dev container keeps the inner harness's native files. */
  nativeDir?: string;
  /** `steeringOf`: the inner harness's, when the container's factory runs more than one kind (a dev container). */
  steeringOf?: Steering;
  /** The container, asked why when a turn fails: one that died (killed, out of memory) says so. */
  box?: Container;
}

export class ContainedHarness implements Harness {
  private readonly nativeDir?: string;
  readonly steeringOf?: Steering;

  constructor(
    private readonly inner: Harness,
    private readonly release: () => Promise<void>,
    private readonly contained: Contained = {},
  ) {
    this.nativeDir = contained.nativeDir;
    if (contained.steeringOf) this.steeringOf = contained.steeringOf;
  }

  async prompt(text: string, ctx: TurnContext): Promise<PromptOutcome> {
    try {
      return await this.inner.prompt(text, ctx);
    } catch (err) {
      throw await this.whyFailed(err);
    }
  }

  /**
   * A turn that failed because its container is gone (killed, out of memory) failed in docker's words for the
   * inner command ("Container … is not running"): said instead is how the container ended and the end of its log.
   * Such a failure (brain_error) has the session drop this harness, so its next turn opens a new container.
   */
  private async whyFailed(err: unknown): Promise<unknown> {
    const box = this.contained.box;
    if (!box || !(err instanceof HarnessError) || err.code !== "brain_error" || (await box.running()))
      return err;
    return new HarnessError(
      "brain_error",
      `${err.message}; ${await box.describe()}; the session's next turn starts a new container`,
    );
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

// Seed A's ProcessFactory: every entry of the config's "harnesses" block is a runner command spoken to over the
// stdio protocol. A shared entry runs one process for many sessions, one attachment each.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { HarnessError } from "../../core/harness.js";
import { findMissing } from "./command.js";
import { type AttachmentTimeouts, DEFAULT_TIMEOUTS, ProcessHarness } from "./process-harness.js";
import { type RunnerCommand, RunnerProcess } from "./runner-process.js";

export interface ProcessHarnessSpec extends RunnerCommand {
  /** One runner process for every session of this harness (attachments), instead of one per session. */
  shared?: boolean;
  supportsSteering?: boolean;
  timeouts?: Partial<AttachmentTimeouts>;
}

export class ProcessFactory implements HarnessFactory {
  readonly name: string;
  readonly supportsSteering: boolean;
  private readonly timeouts: AttachmentTimeouts;
  private sharedRunner: RunnerProcess | undefined;

  constructor(private readonly spec: ProcessHarnessSpec) {
    this.name = spec.name;
    this.supportsSteering = spec.supportsSteering ?? true;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...spec.timeouts };
  }

  async open(options: HarnessOptions): Promise<Harness> {
    const missing = findMissing(this.spec.command, this.spec.args, this.spec.cwd ?? process.cwd());
    if (missing) throw new HarnessError("brain_error", `harness "${this.name}": ${missing}`);
    const runner = this.runnerFor();
    const harness = new ProcessHarness(runner, options, this.timeouts, (h) => this.release(runner, h));
    try {
      await harness.open();
    } catch (err) {
      await harness.close();
      if (err instanceof HarnessError)
        throw new HarnessError(err.code, `opening runner "${this.name}": ${err.message}`);
      throw err;
    }
    return harness;
  }

  /** Stops the shared process, if any (per-session processes stop when their session closes). */
  async close(): Promise<void> {
    const runner = this.sharedRunner;
    this.sharedRunner = undefined;
    await runner?.stop();
  }

  private runnerFor(): RunnerProcess {
    if (!this.spec.shared) return new RunnerProcess(this.spec);
    if (!this.sharedRunner?.alive) this.sharedRunner = new RunnerProcess(this.spec);
    return this.sharedRunner;
  }

  private async release(runner: RunnerProcess, _harness: ProcessHarness): Promise<void> {
    if (runner === this.sharedRunner && runner.alive) return; // peers keep it; detach already released us
    await runner.stop();
  }
}

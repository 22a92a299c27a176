// The claude-code harness family: Claude Code (`claude`, npm @anthropic-ai/claude-code) driven headless.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { type CliDescription, type CliFamily, describeCli, requireCli } from "../cli/family.js";
import type { CliFactoryOptions } from "../cli/options.js";
import { ClaudeCodeHarness, type ClaudeCodeTimeouts } from "./harness.js";

export const CLAUDE_CODE: CliFamily = {
  harness: "claude-code",
  program: "claude",
  npmPackage: "@anthropic-ai/claude-code",
};

export interface ClaudeCodeFactoryOptions extends CliFactoryOptions {
  timeouts?: Partial<ClaudeCodeTimeouts>;
}

export class ClaudeCodeFactory implements HarnessFactory {
  readonly name = CLAUDE_CODE.harness;
  readonly supportsSteering = true;
  readonly steering = "queued" as const;

  constructor(private readonly options: ClaudeCodeFactoryOptions = {}) {}

  async open(options: HarnessOptions): Promise<Harness> {
    const program = requireCli(CLAUDE_CODE, this.options);
    return ClaudeCodeHarness.open(options, program, this.options, this.options.timeouts);
  }

  describe(): Promise<CliDescription> {
    return describeCli(CLAUDE_CODE, this.options);
  }
}

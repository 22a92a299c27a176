// The codex harness family: the OpenAI Codex CLI (`codex`, npm @openai/codex) driven through `codex app-server`.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { type CliDescription, type CliFamily, describeCli, requireCli } from "../cli/family.js";
import type { CliFactoryOptions } from "../cli/options.js";
import { CodexHarness, type CodexTimeouts } from "./harness.js";

export const CODEX: CliFamily = { harness: "codex", program: "codex", npmPackage: "@openai/codex" };

export interface CodexFactoryOptions extends CliFactoryOptions {
  timeouts?: Partial<CodexTimeouts>;
}

export class CodexFactory implements HarnessFactory {
  readonly name = CODEX.harness;
  readonly supportsSteering = true;
  readonly steering = "live" as const;

  constructor(private readonly options: CodexFactoryOptions = {}) {}

  async open(options: HarnessOptions): Promise<Harness> {
    const program = requireCli(CODEX, this.options);
    return CodexHarness.open(options, program, this.options, this.options.timeouts);
  }

  describe(): Promise<CliDescription> {
    return describeCli(CODEX, this.options);
  }
}

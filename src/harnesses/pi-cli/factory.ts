// The pi-cli harness family: the pi coding agent's own CLI (`pi`, npm @mariozechner/pi-coding-agent) in RPC mode.
// Named pi-cli because `pi` is the runner-protocol reference runner (runners/pi), a different harness.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { type CliDescription, type CliFamily, describeCli, requireCli } from "../cli/family.js";
import type { CliFactoryOptions } from "../cli/options.js";
import { PiHarness, type PiTimeouts } from "./harness.js";

export const PI_CLI: CliFamily = {
  harness: "pi-cli",
  program: "pi",
  npmPackage: "@mariozechner/pi-coding-agent",
};

export interface PiFactoryOptions extends CliFactoryOptions {
  timeouts?: Partial<PiTimeouts>;
}

export class PiCliFactory implements HarnessFactory {
  readonly name = PI_CLI.harness;
  readonly supportsSteering = true;
  readonly steering = "live" as const;

  constructor(private readonly options: PiFactoryOptions = {}) {}

  async open(options: HarnessOptions): Promise<Harness> {
    const program = requireCli(PI_CLI, this.options);
    return PiHarness.open(options, program, this.options, this.options.timeouts);
  }

  describe(): Promise<CliDescription> {
    return describeCli(PI_CLI, this.options);
  }
}

// The opencode harness family: opencode (`opencode`, npm opencode-ai) driven through `opencode serve`.
import type { Harness, HarnessFactory, HarnessOptions } from "../../core/harness.js";
import { type CliDescription, type CliFamily, describeCli, requireCli } from "../cli/family.js";
import type { CliFactoryOptions } from "../cli/options.js";
import { OpencodeHarness, type OpencodeTimeouts } from "./harness.js";

export const OPENCODE: CliFamily = { harness: "opencode", program: "opencode", npmPackage: "opencode-ai" };

export interface OpencodeFactoryOptions extends CliFactoryOptions {
  timeouts?: Partial<OpencodeTimeouts>;
}

export class OpencodeFactory implements HarnessFactory {
  readonly name = OPENCODE.harness;
  readonly supportsSteering = true;
  readonly steering = "queued" as const;

  constructor(private readonly options: OpencodeFactoryOptions = {}) {}

  async open(options: HarnessOptions): Promise<Harness> {
    const program = requireCli(OPENCODE, this.options);
    return OpencodeHarness.open(options, program, this.options, this.options.timeouts);
  }

  describe(): Promise<CliDescription> {
    return describeCli(OPENCODE, this.options);
  }
}

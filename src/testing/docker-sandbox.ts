// A CLI family's factory with every session in `sandbox: docker`, as an agent definition's harness.sandbox makes
// it, for running the shared CLI-family checks (src/testing/cli-family.ts) inside containers. The launcher the
// shared bed offers (a loopback-only namespace) is not used: the container is the sandbox, and it reaches the
// bed's fake provider on this host's loopback through the container's network namespace.
import type { HarnessFactory, HarnessOptions } from "../core/harness.js";
import { sandboxSettings } from "../harnesses/cli/descriptor.js";
import type { CliFactoryOptions } from "../harnesses/cli/options.js";
import { SandboxableFactory } from "../harnesses/sandbox/docker-sandbox.js";

class AlwaysDocker implements HarnessFactory {
  readonly name: string;
  readonly supportsSteering: boolean;
  readonly steering?: HarnessFactory["steering"];

  constructor(
    private readonly inner: SandboxableFactory,
    name?: string,
  ) {
    this.name = name ?? inner.name;
    this.supportsSteering = inner.supportsSteering;
    if (inner.steering) this.steering = inner.steering;
  }

  open(options: HarnessOptions) {
    return this.inner.open({
      ...options,
      config: { ...options.config, options: { ...options.config.options, sandbox: "docker" } },
    });
  }
}

/**
 * For CliFamilyCase.factory: the family's factory, sandboxed; the bed's `bin` is kept. `name`: another name for
 * the harness (a bench that runs the family both ways).
 */
export function dockerSandboxed(
  make: (options: CliFactoryOptions) => HarnessFactory,
  name?: string,
): (options: { launcher?: string[]; bin?: string }) => HarnessFactory {
  return ({ bin }) => {
    const host = bin ? { bin } : {};
    return new AlwaysDocker(
      new SandboxableFactory(
        make(host),
        (launcher) => make({ ...host, launcher }),
        sandboxSettings(make(host).name),
      ),
      name,
    );
  };
}

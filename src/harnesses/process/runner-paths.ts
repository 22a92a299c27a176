// Where the built-in runners' programs are in Brain's install: apart from the runner family's descriptor so the
// CLI's early runner start (src/cli/early-runner.ts) finds them without loading the family.
import { join } from "node:path";
import { installRoot } from "../../core/install-root.js";

/** The echo runner (runners/echo) as `npm run build` bundles it (scripts/bundle-cli.mjs): it starts faster. */
export function echoRunnerPath(): string {
  return join(installRoot(), "dist/runners/echo/bundle/main.js");
}

/** The reference runner on pi's agent core (runners/pi); it takes its model and provider from the session. */
export function piRunnerPath(): string {
  return join(installRoot(), "runners/pi/dist/main.js");
}

// Tests spawn compiled runners (dist/runners/echo, dist/src/testing/fixtures/scripted-runner), so the build must be
// current before any test runs. The build is incremental: when `npm test` has just built, this is quick.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export default function setup(): void {
  execFileSync("npm", ["run", "--silent", "build"], {
    cwd: join(import.meta.dirname, ".."),
    stdio: "inherit",
  });
}

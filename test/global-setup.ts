// Tests spawn compiled runners (dist/runners/echo, dist/test/fixtures/scripted-runner), so the build must be
// current before any test runs. tsc is incremental: when `npm test` has just built, this is a quick no-op.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export default function setup(): void {
  const root = join(import.meta.dirname, "..");
  execFileSync(
    process.execPath,
    [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
}

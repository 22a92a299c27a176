// A Brain whose claude-code harness runs a script of the test's in place of the real CLI: for what the real one
// cannot be made to do on cue (write its transcript late, fork its session id).
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeBrain, type TestBrain, tempDir } from "../../../testing/brain.js";
import { ClaudeCodeFactory } from "../factory.js";

/** `script`: a whole node program (its `#!` line included) that speaks stream-json as `claude -p` does. */
export function fakeClaudeBrain(script: string): TestBrain {
  const bin = join(tempDir("brain-fake-claude-"), "claude");
  writeFileSync(bin, script);
  chmodSync(bin, 0o755);
  return makeBrain({
    factories: [new ClaudeCodeFactory({ bin })],
    provider: { base_url: "http://127.0.0.1:9", api_key: "sk-fake" },
  });
}

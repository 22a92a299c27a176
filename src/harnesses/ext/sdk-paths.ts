// Where Brain's harness-author SDKs are in its install.
import { join } from "node:path";
import { installRoot } from "../../core/install-root.js";

/**
 * sdk/python: nui_agent_stdio.py, nui_agent.py, nui_hitl.py (and what they share, nui_wire.py). Extension hosts get
 * it as PYTHONPATH.
 */
export function pythonSdkDir(): string {
  return join(installRoot(), "sdk/python");
}

/** The compiled TypeScript SDK for extension authors (dist/sdk/ts/nui/index.js). */
export function typescriptSdkEntry(): string {
  return join(installRoot(), "dist/sdk/ts/nui/index.js");
}

// Where Brain's harness-author SDKs are, whether this module runs compiled (dist/src/harnesses/ext) or from
// source under vitest (src/harnesses/ext).
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, here.includes(`${sep}dist${sep}`) ? "../../../.." : "../../..");

/** sdk/python: nui_agent_stdio.py, nui_agent.py, nui_hitl.py. Extension hosts get it as PYTHONPATH. */
export function pythonSdkDir(): string {
  return join(projectRoot, "sdk/python");
}

/** The compiled TypeScript SDK for extension authors (dist/sdk/ts/nui/index.js). */
export function typescriptSdkEntry(): string {
  return join(projectRoot, "dist/sdk/ts/nui/index.js");
}

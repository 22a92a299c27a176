// A host that starts an api-harness turn and then only waits: the test kills it (SIGKILL) while a permission
// request is pending, to prove the request outlives the host.
//   node dist/src/harnesses/api/testing/hold-permission.js HOME BASE_URL API_KEY
// Prints {"session": ID} once the turn has started; never exits on its own.
import { Brain } from "../../../core/brain.js";
import { HarnessRegistry } from "../../../core/registry.js";
import { FsSessionStore } from "../../../store/fs/index.js";
import { BuiltinTools } from "../../../tools/builtin.js";
import { ToolRouter } from "../../../tools/router.js";
import { ApiHarnessFactory } from "../factory.js";

const [home, baseUrl, apiKey] = process.argv.slice(2);
if (!home || !baseUrl || !apiKey) {
  process.stderr.write("usage: hold-permission.js HOME BASE_URL API_KEY\n");
  process.exit(2);
}
const brain = new Brain({
  store: new FsSessionStore(home),
  harnesses: new HarnessRegistry([new ApiHarnessFactory()]),
  tools: new ToolRouter([new BuiltinTools()]),
  credentials: () => ({ api_key: apiKey, base_url: baseUrl }),
});
const session = await brain.create({
  harness: "api",
  config: { model: "anthropic:fake-model", tools: ["echo"] },
  // Nobody will answer, and the headless deny is an hour away: the request stays pending until the kill.
  permissions: { tools: { echo: "ask" }, ask_timeout_ms: 3_600_000 },
});
await session.prompt("echo something, with permission");
process.stdout.write(`${JSON.stringify({ session: session.id })}\n`);
setInterval(() => {}, 1 << 30);

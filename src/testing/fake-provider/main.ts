// Runs the fake provider by hand: `node dist/src/testing/fake-provider/main.js [--port N] [--api-key KEY]`.
// Prints {"url": …} as one JSON line, then serves (echo fallback) until SIGTERM or SIGINT.
import { parseArgs } from "node:util";
import { startFakeProvider } from "./server.js";

const { values } = parseArgs({
  options: { port: { type: "string", default: "0" }, "api-key": { type: "string" } },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`fake-provider: bad --port ${values.port}\n`);
  process.exit(2);
}

const provider = await startFakeProvider({ port, apiKey: values["api-key"] });
process.stdout.write(`${JSON.stringify({ url: provider.url })}\n`);

const stop = () => {
  provider.close().then(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

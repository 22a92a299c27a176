// The agent server's program, as the family images run it:
//   node dist/src/agent-server/agent-server-main.js <family> [port]
// <family> defaults to BRAIN_AGENT_FAMILY, the port to PORT or 8090. It listens on 0.0.0.0: the `docker`
// harness reaches it from outside the container (published, or through the container's network namespace). So does
// every process on the host and every container on the same network: with BRAIN_AGENT_TOKEN (which the `docker`
// harness sets) only a request carrying it is served.
import { serveHttp } from "../../sdk/ts/nui/index.js";
import {
  AGENT_PORT,
  AGENT_TOKEN_ENV,
  CliAgentServer,
  DEFAULT_IDLE_MS,
  familyFactory,
  IDLE_ENV,
} from "./agent-server.js";

const token = process.env[AGENT_TOKEN_ENV] || undefined;
// Not passed on to the CLI the server starts, nor to what that CLI runs.
delete process.env[AGENT_TOKEN_ENV];

const family = process.argv[2] ?? process.env.BRAIN_AGENT_FAMILY ?? "";
const port = Number(process.argv[3] ?? process.env.PORT ?? AGENT_PORT);
if (!family || !Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(
    "usage: agent-server-main.js <family> [port] (or BRAIN_AGENT_FAMILY and PORT); family: claude-code, codex, opencode or pi-cli\n",
  );
  process.exit(2);
}
const idle = process.env[IDLE_ENV] || String(DEFAULT_IDLE_MS / 1000);
if (!/^\d+$/.test(idle)) {
  process.stderr.write(
    `agent-server: ${IDLE_ENV} takes a whole number of seconds a session's CLI stays open with no run (0: for as long as the server runs), not ${JSON.stringify(idle)}\n`,
  );
  process.exit(2);
}
let server: CliAgentServer;
try {
  server = new CliAgentServer(familyFactory(family), undefined, undefined, Number(idle) * 1000);
} catch (err) {
  process.stderr.write(`agent-server: ${(err as Error).message}\n`);
  process.exit(2);
}
const serving = await serveHttp(server, {
  port,
  host: "0.0.0.0",
  routes: server.routes(),
  ...(token ? { token } : {}),
});
if (!token) {
  process.stderr.write(
    `agent-server: ${AGENT_TOKEN_ENV} is not set: anyone who reaches this port can run the agent\n`,
  );
}
process.stderr.write(`agent-server: ${family} on port ${serving.port}\n`);
await serving.closed;
process.exit(0);

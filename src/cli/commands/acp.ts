// `brain acp`: an Agent Client Protocol agent on stdio (how editors such as Zed start agent servers). With
// --server it drives that daemon; without, it runs its own daemon on a private loopback port and token over
// $BRAIN_HOME, so sessions made from the editor are ordinary Brain sessions either way.
import { Readable, Writable } from "node:stream";
import { MessageTooLargeError, ndJsonStream } from "@agentclientprotocol/sdk";
import { brainAcpAgent } from "../../acp/agent.js";
import { daemonProblem } from "../../acp/daemon-check.js";
import { DAEMON_WAIT_SECONDS } from "../../acp/reach.js";
import { BrainClient } from "../../client/client.js";
import { SILENCE_MS } from "../../client/events.js";
import { installVersion } from "../../core/install-root.js";
import { homeAgents } from "../../server/agents.js";
import { newToken } from "../../server/auth/tokens.js";
import { startDaemon } from "../../server/daemon.js";
import { parse, refuseExtra, str } from "../args.js";
import { loadConfig } from "../config.js";
import { UsageError } from "../errors.js";
import { brainHome, createBrain } from "../setup.js";
import { connect } from "./remote/connect.js";

export const usage = `acp [--server URL [--token T]] [--harness NAME | --agent ID]
                              an ACP agent on stdio for editors (Zed): sessions on any Brain harness`;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    server: { type: "string" },
    token: { type: "string" },
    harness: { type: "string" },
    agent: { type: "string" },
  });
  refuseExtra(positionals, 0, "acp takes no arguments (it speaks ACP on stdin and stdout)");
  const options = {
    version: installVersion(),
    daemonWaitMs: daemonWaitMs(),
    streamSilenceMs: streamSilenceMs(),
    ...(str(values.harness) ? { harness: str(values.harness) } : {}),
    ...(str(values.agent) ? { agent: str(values.agent) } : {}),
  };
  let client: BrainClient;
  let stop = async () => {};
  if (str(values.server)) {
    client = connect({ server: str(values.server), token: str(values.token) });
    // Before the editor is answered: a daemon too old for the front door would fail only mid-session.
    const problem = await daemonProblem(client, options.version);
    if (problem) {
      process.stderr.write(`brain acp: ${problem}\n`);
      return 1;
    }
  } else {
    const loaded = loadConfig(str(values.config));
    const home = brainHome();
    // The operator's editor on stdio, the only client: as `brain run`, it may use the usual provider variables.
    const brain = createBrain(loaded, home, { warmRunners: true, providerEnv: process.env });
    const token = newToken();
    const daemon = await startDaemon({
      brain,
      home,
      port: 0,
      tokens: [{ token, tenant: "default", role: "controller" }],
      defaults: loaded.config.defaults ?? {},
      agents: homeAgents(home),
    });
    client = new BrainClient({ url: daemon.url, token, client: "acp" });
    stop = async () => {
      await daemon.close();
      await brain.close();
    };
  }
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const editorGone = new AbortController();
  const connection = brainAcpAgent(client, { ...options, editorGone: editorGone.signal }).connect(stream);
  connection.signal.addEventListener("abort", () => editorGone.abort(), { once: true });
  // Stopped by a signal (an editor that ends its agent servers with SIGTERM, a Ctrl-C): as when the editor hangs up,
  // the turn is interrupted and the daemon closed. Ended by the signal itself, the process left its own daemon's
  // turn open in the log and its spare session directory behind.
  const hangUp = () => connection.close(new Error("brain acp: stopped by a signal"));
  process.once("SIGTERM", hangUp);
  process.once("SIGINT", hangUp);
  await connection.closed;
  process.off("SIGTERM", hangUp);
  process.off("SIGINT", hangUp);
  await stop();
  // The SDK closes the connection on a line past its cap and says nothing: the editor would see a silent exit.
  const reason: unknown = connection.signal.reason;
  if (reason instanceof MessageTooLargeError) {
    process.stderr.write(
      `brain acp: the editor sent a message over ${reason.maxMessageBytes / 2 ** 20} MiB, ACP's limit on one line; ` +
        "the connection is closed. Send large content as a resource link instead of inline.\n",
    );
    return 1;
  }
  return 0;
}

/** $BRAIN_ACP_DAEMON_WAIT: seconds a prompt waits for a daemon it lost to answer again (default 60). */
export function daemonWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  return secondsOf(
    env,
    "BRAIN_ACP_DAEMON_WAIT",
    "a prompt waits for a daemon it lost to answer again",
    DAEMON_WAIT_SECONDS,
  );
}

/**
 * $BRAIN_ACP_STREAM_SILENCE: seconds a turn's event stream may bring nothing, not even the daemon's heartbeat (every
 * 15 s), before it is taken as dropped (default 45): how soon a hung daemon (SIGSTOP) is found.
 */
export function streamSilenceMs(env: NodeJS.ProcessEnv = process.env): number {
  return secondsOf(
    env,
    "BRAIN_ACP_STREAM_SILENCE",
    "a turn's event stream may bring nothing before it is taken as dropped",
    SILENCE_MS / 1000,
  );
}

/** A whole number of seconds, at least 1, from $`name` (`what` says what it bounds), in ms; `seconds` when unset. */
function secondsOf(env: NodeJS.ProcessEnv, name: string, what: string, seconds: number): number {
  const given = env[name];
  if (!given) return seconds * 1000;
  if (!/^[0-9]{1,7}$/.test(given) || Number(given) === 0) {
    throw new UsageError(
      `$${name} is the seconds ${what} (a whole number, at least 1; default ${seconds}), not "${given}"`,
    );
  }
  return Number(given) * 1000;
}

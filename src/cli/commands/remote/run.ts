// `brain run --server URL PROMPT`: the same one-prompt run, on the daemon. The session (new, or --session ID)
// lives there; this process only prompts and follows the turn, so a second Ctrl-C leaves it running.

import { randomUUID } from "node:crypto";
import { ClientError } from "../../../client/errors.js";
import type { CreateSessionBody } from "../../../protocol/api.js";
import { connect } from "./connect.js";
import { onCtrlC } from "./sigint.js";
import { RemoteTail } from "./tail.js";

export interface RemoteRunOptions {
  server: string;
  token?: string;
  prompt: string;
  harness?: string;
  agent?: string;
  session?: string;
  model?: string;
  /** A provider the daemon's operator configured, by name. */
  provider?: string;
  tools?: string[];
  json: boolean;
  allow: string[];
  deny: string[];
}

const EXIT = { completed: 0, failed: 1, interrupted: 130 } as const;

export async function remoteRun(options: RemoteRunOptions): Promise<number> {
  const client = connect({ server: options.server, token: options.token });
  let view = options.session ? await client.session(options.session).catch(notFoundToUndefined) : undefined;
  if (!view) {
    const config = {
      ...(options.model ? { model: options.model } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
    };
    const body: CreateSessionBody = {
      ...(options.harness ? { harness: options.harness } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.session ? { id: options.session } : {}),
      ...(options.provider ? { provider: options.provider } : {}),
      ...(Object.keys(config).length ? { config } : {}),
    };
    // Keyed, as the prompt below: a create the daemon died holding is asked again and makes one session.
    view = await client.create(body, { key: randomUUID() });
  }
  const id = view.id;
  const after = view.last_seq ?? 0;
  // A key of its own: when the daemon dies holding the prompt, the client asks again once it is back, and the
  // daemon (which finds the key in the log) runs it once.
  const { turn } = await client.prompt(id, options.prompt, undefined, { key: randomUUID() });
  const tail = new RemoteTail(client, id, {
    json: options.json,
    after,
    caughtUpAt: after,
    stopAfter: turn,
    rules: {
      allow: options.allow,
      deny: options.deny,
      interactive: !options.json && process.stdin.isTTY === true,
    },
  });
  const off = onCtrlC(client, id, tail);
  try {
    const status = await tail.run();
    if (!options.json) process.stderr.write(`session ${id}\n`);
    return status === undefined ? EXIT.interrupted : EXIT[status];
  } finally {
    off();
  }
}

function notFoundToUndefined(err: unknown): undefined {
  if (err instanceof ClientError && err.status === 404) return undefined;
  throw err;
}

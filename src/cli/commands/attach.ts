// `brain attach ID`: follow a session on the daemon: its history, then live, with answers to its requests and
// Ctrl-C to interrupt (twice to detach).
import { parse, refuseExtra, str, strs, UsageError, wholeNumber } from "../args.js";
import { connect } from "./remote/connect.js";
import { onCtrlC } from "./remote/sigint.js";
import { RemoteTail } from "./remote/tail.js";

export const usage = `attach ID [--server URL] [--token T] [--after SEQ] [--until-settled] [--allow TOOL]... [--deny TOOL]... [--json]
                              follow a session on the daemon; answer its requests; Ctrl-C interrupts, twice detaches`;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    server: { type: "string" },
    token: { type: "string" },
    after: { type: "string" },
    "until-settled": { type: "boolean" },
    allow: { type: "string", multiple: true },
    deny: { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  const id = positionals[0];
  refuseExtra(positionals, 1, "attach takes one session ID");
  if (!id) throw new UsageError("attach needs a session ID (see `brain sessions ls` or the web UI)");
  const given = str(values.after);
  const after =
    given === undefined ? 0 : wholeNumber("--after", given, "the event seq to print events after");
  const client = connect({ server: str(values.server), token: str(values.token) });
  const view = await client.session(id);
  const json = values.json === true;
  if (!json) {
    const state = view.active_turn ? "a turn is running" : view.status;
    process.stderr.write(`[attached to ${id} on ${client.url}: ${view.harness}, ${state}]\n`);
  }
  const tail = new RemoteTail(client, id, {
    json,
    after,
    caughtUpAt: view.last_seq ?? 0,
    rules: {
      allow: strs(values.allow),
      deny: strs(values.deny),
      interactive: !json && process.stdin.isTTY === true,
    },
    ...(values["until-settled"] ? { stopAfter: view.active_turn ?? "next" } : {}),
  });
  if (values["until-settled"] && !view.active_turn && !json) {
    process.stderr.write("[no turn is running; --until-settled waits for the next one]\n");
  }
  const off = onCtrlC(client, id, tail);
  try {
    const status = await tail.run();
    return status === undefined ? 0 : { completed: 0, failed: 1, interrupted: 130 }[status];
  } finally {
    off();
  }
}

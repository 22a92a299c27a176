// `brain run`: one prompt on a new or existing session, streamed as it happens.
import type { Brain } from "../core/brain.js";
import { SessionError } from "../core/errors.js";
import type { Session } from "../core/session.js";
import type { InputLayers, SessionLayer } from "../core/session-input.js";
import type { ProviderChoice, SessionDefaults } from "../protocol/config.js";
import type { SessionEvent } from "../protocol/events.js";
import { answerRequests } from "./answers.js";
import { jsonPrinter, textPrinter } from "./output.js";
import { onStdoutClosed } from "./stdout-closed.js";

export interface RunOptions {
  prompt: string;
  harness?: string;
  session?: string;
  model?: string;
  tools?: string[];
  /** A configured provider's name, or inline settings (the operator's own CLI may give them). */
  provider?: ProviderChoice;
  json?: boolean;
  allow?: string[];
  deny?: string[];
  defaults: SessionDefaults;
  /** An agent definition's layer, over the defaults. */
  agent?: SessionLayer;
}

const EXIT = { completed: 0, failed: 1, interrupted: 130 } as const;
/** 128 + SIGTERM, as a shell shows a command the signal ended. */
const EXIT_TERMINATED = 143;

export async function runPrompt(brain: Brain, options: RunOptions): Promise<number> {
  const { session, after } = await openOrCreate(brain, options);
  const print = options.json ? jsonPrinter() : textPrinter();
  const settledSeen = new Set<string>();
  let shownSeq = after;
  const show = (events: SessionEvent[]) => {
    const fresh = events.filter((e) => e.seq > shownSeq);
    if (fresh.length === 0) return;
    shownSeq = fresh.at(-1)!.seq;
    for (const e of fresh) if (e.type === "turn.settled" && e.turn) settledSeen.add(e.turn);
    print(fresh);
  };
  // What opening logged (a new session's session.opened, a reopened one's) came before anyone listened: read back,
  // with what comes meanwhile held until it is out, so each event after `after` is printed once, in order.
  let held: SessionEvent[] | undefined = [];
  const unsubscribe = session.log.subscribe((events) => (held ? held.push(...events) : show(events)));
  show(await session.log.read(after));
  const meanwhile = held;
  held = undefined;
  show(meanwhile);
  const stopAnswering = answerRequests(session, {
    allow: options.allow ?? [],
    deny: options.deny ?? [],
    interactive: !options.json && process.stdin.isTTY === true,
  });
  let interrupts = 0;
  let terminated = false;
  const stop = (why: string) => {
    interrupts += 1;
    if (interrupts === 1) {
      process.stderr.write(`\n[${why}]\n`);
      session.interrupt().catch(() => {});
    } else {
      process.exit(terminated ? EXIT_TERMINATED : EXIT.interrupted);
    }
  };
  const onSigint = () => stop("interrupting; press Ctrl-C again to leave at once");
  // `timeout`, a CI runner or a service manager stops a run with SIGTERM: ended by the signal, Brain left its
  // turn open in the log and its session unclosed. It stops as a Ctrl-C does.
  const onSigterm = () => {
    terminated = true;
    stop("terminated: interrupting the turn; a second SIGTERM leaves at once");
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  // Nobody reads the reply any more: the turn stops as on a Ctrl-C, so the log holds how it ended.
  let outputClosed = false;
  const stopWatching = onStdoutClosed(() => {
    if (outputClosed) return;
    outputClosed = true;
    session.interrupt().catch(() => {});
  });
  try {
    const turn = await session.prompt(options.prompt);
    const outcome = await turn.settled;
    // A turn.settled the log could not take was never printed: say how the turn ended (the disk's error).
    if (!settledSeen.has(turn.turn) && outcome.error) {
      process.stderr.write(
        `brain: turn ${outcome.status}: ${outcome.error.code}: ${outcome.error.message}\n`,
      );
    }
    if (!options.json) process.stderr.write(`session ${session.id}\n`);
    return terminated ? EXIT_TERMINATED : EXIT[outcome.status];
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    stopWatching();
    unsubscribe();
    stopAnswering();
  }
}

/** The session to run in, and its last seq before this run opened it (what the output starts after). */
async function openOrCreate(brain: Brain, options: RunOptions): Promise<{ session: Session; after: number }> {
  if (options.session) {
    // Its record alone, not a list of all: another session's record that cannot be read must not stop this run.
    const id = options.session;
    const known = await brain.record(id).then(
      () => true,
      (err: unknown) => {
        if (err instanceof SessionError && err.code === "not_found") return false;
        throw err;
      },
    );
    if (known) {
      const after = await brain.lastSeq(id);
      return { session: await brain.session(id), after };
    }
  }
  return { session: await brain.create(brain.resolveInput(newSessionLayers(options))), after: 0 };
}

/** What a new session of this run is made of, layer by layer (resolved by resolveSessionInput). */
export function newSessionLayers(options: RunOptions): InputLayers {
  const { harness, model, tools, provider, session } = options;
  return {
    defaults: options.defaults,
    ...(options.agent ? { agent: options.agent } : {}),
    call: {
      ...(harness ? { harness } : {}),
      config: { ...(model ? { model } : {}), ...(tools ? { tools } : {}) },
      ...(provider ? { provider } : {}),
      ...(session ? { id: session } : {}),
    },
  };
}

// Brain as the CLI wires it (src/cli/setup.ts), with the flood runner as its only harness, and a watcher that
// follows one turn through the durable log the way a reader does: session.log.subscribe.
import { fileURLToPath } from "node:url";
import { Brain } from "../../src/core/brain.js";
import { HarnessRegistry } from "../../src/core/registry.js";
import type { Session } from "../../src/core/session.js";
import { ProcessFactory } from "../../src/harnesses/process/factory.js";
import type { SessionEvent } from "../../src/protocol/events.js";
import { FsSessionStore } from "../../src/store/fs/index.js";
import { BuiltinTools } from "../../src/tools/builtin.js";
import { ToolRouter } from "../../src/tools/router.js";
import { withTimeout } from "./cleanup.js";
import { benchSpawner } from "./spawn.js";
import { benchStoreOptions } from "./store-options.js";

/** dist/bench/lib → dist/bench/runners/flood-runner.js */
export function floodRunnerPath(): string {
  return fileURLToPath(new URL("../runners/flood-runner.js", import.meta.url));
}

export function benchBrain(home: string): { brain: Brain; store: FsSessionStore } {
  const store = new FsSessionStore(home, undefined, undefined, benchStoreOptions());
  const factory = new ProcessFactory(
    { name: "flood", command: process.execPath, args: [floodRunnerPath()] },
    // As a daemon's factories do for their whole life: a Brain made per round does not fork this process per round.
    benchSpawner,
  );
  const brain = new Brain({
    store,
    harnesses: new HarnessRegistry([factory]),
    tools: new ToolRouter([new BuiltinTools()]),
  });
  return { brain, store };
}

export interface WatchedTurn {
  /** From calling session.prompt() to the subscriber receiving `turn.settled`. */
  seconds: number;
  status: string;
  deltas: number;
  /** Characters the deltas carried, together: the log's redaction may regroup a stream's deltas, never its text. */
  deltaChars: number;
  toolCalls: number;
  toolResults: number;
  /** Subscriber batches while the turn ran: one per group commit, or several for one above 1024 events. */
  commits: number;
  /** Events committed while the turn ran (user.prompt to turn.settled). */
  events: number;
  message: string | undefined;
}

/** Runs one prompt and follows it through the log until `turn.settled` is delivered. */
export async function watchTurn(session: Session, text: string, timeoutMs = 90_000): Promise<WatchedTurn> {
  let deltas = 0;
  let deltaChars = 0;
  let toolCalls = 0;
  let toolResults = 0;
  let commits = 0;
  let events = 0;
  let message: string | undefined;
  let settledAt = 0n;
  let resolveSettled: (event: SessionEvent) => void = () => {};
  const settled = new Promise<SessionEvent>((resolve) => {
    resolveSettled = resolve;
  });
  const unsubscribe = session.log.subscribe((batch) => {
    commits++;
    events += batch.length;
    for (const e of batch) {
      if (e.type === "assistant.delta") {
        deltas++;
        deltaChars += e.data.text.length;
      } else if (e.type === "tool.call") toolCalls++;
      else if (e.type === "tool.result") toolResults++;
      else if (e.type === "assistant.message") message = e.data.text;
      else if (e.type === "turn.settled") {
        settledAt = process.hrtime.bigint();
        resolveSettled(e);
      }
    }
  });
  try {
    const t0 = process.hrtime.bigint();
    const started = await session.prompt(text);
    const outcome = await withTimeout(started.settled, timeoutMs, `prompt "${text}"`);
    const last = await withTimeout(settled, 5_000, "turn.settled delivery");
    if (last.turn !== started.turn)
      throw new Error(`turn.settled for ${last.turn}, expected ${started.turn}`);
    if (outcome.status !== "completed") {
      throw new Error(`prompt "${text}" ended ${outcome.status}: ${outcome.error?.message ?? "(no error)"}`);
    }
    return {
      seconds: Number(settledAt - t0) / 1e9,
      status: outcome.status,
      deltas,
      deltaChars,
      toolCalls,
      toolResults,
      commits,
      events,
      message,
    };
  } finally {
    unsubscribe();
  }
}

/** A fresh Brain with one session bound to `echo`, its runner started by a warm-up prompt. */
export async function openBenchSession(home: string, warmup: string) {
  const { brain, store } = benchBrain(home);
  const session = await brain.create({ harness: "flood", config: { tools: ["echo"] } });
  await watchTurn(session, warmup);
  return {
    session,
    async close(): Promise<void> {
      await brain.close();
      await store.remove(session.id);
    },
  };
}

/** Prompts and waits for the turn to settle; a turn that does not complete fails the bench, named by `bench`. */
export async function completeTurn(session: Session, text: string, bench: string, timeoutMs = 120_000) {
  const turn = await session.prompt(text);
  const outcome = await withTimeout(turn.settled, timeoutMs, `${bench}: turn`);
  if (outcome.status !== "completed") throw new Error(`${bench}: a turn ended ${outcome.status}`);
}

/** Prompts and resolves at the first assistant.delta the log delivers, once the turn has completed too. */
export async function firstDelta(session: Session, text: string, bench: string): Promise<void> {
  let seen: () => void = () => {};
  const delta = new Promise<void>((resolve) => {
    seen = resolve;
  });
  const unsubscribe = session.log.subscribe((batch) => {
    if (batch.some((e) => e.type === "assistant.delta")) seen();
  });
  try {
    const turn = await session.prompt(text);
    await withTimeout(delta, 60_000, `${bench}: first delta`);
    const outcome = await withTimeout(turn.settled, 60_000, `${bench}: turn`);
    if (outcome.status !== "completed") throw new Error(`${bench}: a turn ended ${outcome.status}`);
  } finally {
    unsubscribe();
  }
}

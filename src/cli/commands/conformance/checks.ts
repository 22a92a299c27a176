// The checks, in the order they run. They share one session, so each builds on the state the ones before left:
// the four verification checks of docs/protocol.md#runner-stdio-protocol plus the protocol rules a runner must keep.

import { isDeepStrictEqual } from "node:util";
import type { Session } from "../../../core/session.js";
import type { SessionEvent } from "../../../protocol/events.js";
import { type FakeProviderRequest, lastUserText } from "../../../testing/fake-provider/index.js";
import { failureOf, type KitContext, textOf } from "./context.js";
import type { SubjectProfile } from "./profiles.js";
import { FAIL_MESSAGE } from "./tools.js";

export class Skip extends Error {}
/** The harness cannot keep the rule by its nature; the message says exactly what differed. */
export class Differs extends Error {}

export interface CheckState {
  session?: Session;
  /** Did the runner call the model at all? Some checks only apply to runners that do. */
  usesModel: boolean;
}

export interface Check {
  name: string;
  rule: string;
  /** When it fails, the checks after it cannot say anything: they are skipped. */
  required?: boolean;
  run(ctx: KitContext, state: CheckState): Promise<string>;
}

const TOOLS = ["echo", "fail", "wait"];

function session(state: CheckState): Session {
  if (!state.session) throw new Error("no session: an earlier check failed to create it");
  return state.session;
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function toolEvents(events: SessionEvent[], type: "tool.call" | "tool.result") {
  return events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
}

/** Runs one prompt that asks for a tool, both in words (for model-less runners) and as the model's reply. */
async function toolTurn(
  ctx: KitContext,
  s: Session,
  name: string,
  args: Record<string, unknown>,
  after: string,
) {
  ctx.fake.script([{ toolCalls: [ctx.profile.call(name, args)] }, { text: after }]);
  return ctx.turn(s, `call the tool "${name}" with ${JSON.stringify(args)}`);
}

export const CHECKS: Check[] = [
  {
    name: "open",
    rule: "answers `open` (with its attachment) within the open timeout",
    required: true,
    async run(ctx, state) {
      state.session = await ctx.brain.create({ harness: ctx.harness, config: ctx.config(TOOLS) });
      await state.session.start();
      return "opened";
    },
  },
  {
    name: "prompt",
    rule: "streams assistant events for the active turn and replies to `prompt`; every frame decodes strictly",
    async run(ctx, state) {
      const { outcome, events } = await ctx.turn(session(state), "Say hello.");
      assert(outcome.status === "completed", `the turn ended ${failureOf(outcome)}`);
      const messages = events.filter((e) => e.type === "assistant.message");
      assert(messages.length > 0, "no assistant.message event in the turn");
      state.usesModel = ctx.fake.requests.length > 0;
      if (state.usesModel) {
        const headers = ctx.fake.requests.at(-1)?.headers ?? {};
        const carried = ctx.profile.keyHeaders.some((name) => headers[name]?.includes(ctx.apiKey));
        assert(carried, "the model request did not carry the session's provider key");
      }
      const deltas = events.filter((e) => e.type === "assistant.delta").length;
      return `${messages.length} message(s), ${deltas} delta(s), ${state.usesModel ? "calls the model" : "no model calls"}`;
    },
  },
  {
    name: "tool call",
    rule: "calls a bound tool by reverse `tool.call` and uses its result",
    async run(ctx, state) {
      const { outcome, events } = await toolTurn(ctx, session(state), "echo", { value: "ping" }, "pong");
      assert(outcome.status === "completed", `the turn ended ${failureOf(outcome)}`);
      const calls = toolEvents(events, "tool.call");
      const results = toolEvents(events, "tool.result");
      assert(
        calls.some((c) => c.name === "echo"),
        "the runner did not call the echo tool",
      );
      assert(
        results.some((r) => r.is_error === false),
        "the echo tool call did not succeed",
      );
      return `${calls.length} tool call(s)`;
    },
  },
  {
    name: "failure separation",
    rule: "a tool's error result goes back to the model; the turn goes on",
    async run(ctx, state) {
      const before = ctx.fake.requests.length;
      const { outcome, events } = await toolTurn(ctx, session(state), "fail", {}, "recovered");
      assert(outcome.status === "completed", `a failing tool broke the turn: ${failureOf(outcome)}`);
      assert(
        toolEvents(events, "tool.result").some((r) => r.is_error === true),
        "the fail tool was not called",
      );
      if (state.usesModel) {
        const followUp = ctx.fake.requests.slice(before + 1);
        const carried = followUp.some((r) => JSON.stringify(r.body).includes(FAIL_MESSAGE));
        assert(carried, "the tool's error did not reach the model in the next request");
        return "error result reached the model";
      }
      return "turn completed after the error result";
    },
  },
  {
    name: "checkpoint",
    rule: "checkpoint lists regular files inside the dir with exact sizes; append-only files only grow",
    async run(ctx, state) {
      const s = session(state);
      const first = await s.checkpoint();
      const { outcome } = await ctx.turn(s, "One more turn, please.");
      assert(outcome.status === "completed", `the turn ended ${failureOf(outcome)}`);
      const second = await s.checkpoint();
      const files = second.files.map((f) => `${f.path} ${f.size} B${f.append_only ? " append-only" : ""}`);
      assert(
        second.files.length > 0 || first.files.length > 0 || !state.usesModel,
        "no native files after 4 turns",
      );
      return files.join(", ") || "no files";
    },
  },
  {
    name: "clean interruption",
    rule: "interrupt while a tool call waits: settles as interrupted, earlier checkpoint files stay intact",
    async run(ctx, state) {
      await interruptAt(ctx, session(state), {
        script: [{ toolCalls: [ctx.profile.call("wait", {})] }, { text: "after the wait" }],
        prompt: 'call the tool "wait" with {}',
        at: (e) => e.type === "tool.call",
        what: "tool.call for the wait tool",
      });
      return "settled as interrupted; checkpoint and next turn fine";
    },
  },
  {
    name: "interrupt mid-stream",
    rule: "interrupt while the model streams: settles as interrupted, the next turn works",
    async run(ctx, state) {
      if (!state.usesModel) throw new Skip("the runner does not call the model");
      const slow = Array.from({ length: 200 }, (_, i) => `word${i} `).join("");
      await interruptAt(ctx, session(state), {
        script: [{ text: slow, chunkSize: 6, delayMs: 20 }],
        prompt: "Tell me a long story.",
        at: (e) => e.type === "assistant.delta",
        what: "streamed delta",
      });
      return "settled as interrupted";
    },
  },
  {
    name: "passive open",
    rule: "reopening a saved dir makes zero model or tool calls until the next prompt",
    async run(ctx, state) {
      const id = session(state).id;
      await session(state).checkpoint();
      await ctx.restart();
      const requests = ctx.fake.requests.length;
      const reopened = await ctx.brain.session(id);
      state.session = reopened;
      const toolCallsBefore = (await reopened.log.read(0)).filter((e) => e.type === "tool.call").length;
      await reopened.start(); // the runner opens the saved dir
      await new Promise((resolve) => setTimeout(resolve, 500));
      const toolCalls = (await reopened.log.read(0)).filter((e) => e.type === "tool.call").length;
      assert(
        ctx.fake.requests.length === requests,
        `reopening made ${ctx.fake.requests.length - requests} model call(s)`,
      );
      assert(toolCalls === toolCallsBefore, "reopening made a tool call");
      return "no model or tool calls after reopening";
    },
  },
  {
    name: "checkpoint fidelity",
    rule: "a checkpoint restored into a fresh dir gives the same prompt context on the next turn",
    async run(ctx, state) {
      const original = session(state);
      const checkpoint = await original.checkpoint();
      const fork = await ctx.brain.fork(original.id, checkpoint.id);
      const prompt = "What did we talk about?";
      const runOn = async (s: Session) => {
        ctx.fake.reset();
        const { outcome, events } = await ctx.turn(s, prompt);
        assert(outcome.status === "completed", `the turn ended ${failureOf(outcome)}`);
        return { requests: ctx.fake.requests.map(contextOf), text: textOf(events) };
      };
      const a = await runOn(original);
      const b = await runOn(fork);
      if (state.usesModel) {
        assert(
          a.requests.length === b.requests.length,
          `${a.requests.length} vs ${b.requests.length} model requests`,
        );
        if (!isDeepStrictEqual(a.requests, b.requests)) {
          const dirs = [ctx.nativeDir(original.id), ctx.nativeDir(fork.id)] as const;
          throw fidelityGap(a.requests, b.requests, dirs, ctx.profile);
        }
      }
      assert(a.text === b.text, `different replies: ${JSON.stringify(a.text)} vs ${JSON.stringify(b.text)}`);
      return state.usesModel ? `${a.requests.length} identical model request(s)` : "identical replies";
    },
  },
];

/**
 * Interrupts a running turn and checks the rest of the protocol's clean interruption: it settles as interrupted by
 * the runner's own doing, the checkpoint after it is valid (earlier bytes intact), and the next turn works.
 */
/**
 * Starts a turn on `script` and interrupts it once `at` shows in it (`what` names that event): the turn must
 * stop calling the model and settle as interrupted, and the session must checkpoint and take the next turn.
 */
async function interruptAt(
  ctx: KitContext,
  s: Session,
  turn: {
    script: Parameters<KitContext["fake"]["script"]>[0];
    prompt: string;
    at: (e: SessionEvent) => boolean;
    what: string;
  },
): Promise<void> {
  ctx.fake.script(turn.script);
  const started = await s.prompt(turn.prompt);
  await ctx.waitInTurn(s, started, turn.at, turn.what);
  const requests = ctx.fake.requests.length;
  await s.interrupt();
  const outcome = await ctx.withTimeout(started.settled, "the interrupted turn did not settle");
  assertStopped(ctx, await turnEvents(s, started.turn), requests);
  assert(outcome.status === "interrupted", `the turn ended ${failureOf(outcome)}, not interrupted`);
  await s.checkpoint(); // refuses append-only files whose earlier bytes changed
  const next = await ctx.turn(s, "Are you still there?");
  assert(
    next.outcome.status === "completed",
    `the turn after the interrupt ended ${failureOf(next.outcome)}`,
  );
}

async function turnEvents(s: Session, turn: string): Promise<SessionEvent[]> {
  return (await s.log.read(0)).filter((e) => e.turn === turn);
}

/** After an interrupt the runner must stop by itself: no kill by Brain, no further model request or tool call. */
function assertStopped(ctx: KitContext, events: SessionEvent[], requestsAtInterrupt: number): void {
  const killed = events.some((e) => e.type === "harness.warning" && /killed/.test(String(e.data.message)));
  assert(!killed, "the runner did not settle the interrupted turn itself: Brain had to kill it");
  const more = ctx.fake.requests.length - requestsAtInterrupt;
  assert(more === 0, `the runner made ${more} model request(s) after the interrupt`);
  const interruptAt = events.find((e) => e.type === "user.interrupt")?.seq ?? Number.POSITIVE_INFINITY;
  const lateCalls = events.filter((e) => e.type === "tool.call" && e.seq > interruptAt).length;
  assert(lateCalls === 0, `the runner made ${lateCalls} tool call(s) after the interrupt`);
}

function contextOf(request: FakeProviderRequest) {
  return { path: request.path, body: request.body, last: lastUserText(request) };
}

/**
 * Why two sessions' requests differ: a failure, unless they are equal once the session's directory (a CLI's system
 * prompt names it, and a restore moves it), the fields the profile names as the CLI's own identity and the ids it
 * mints per request (not the conversation) are set aside; then what differs by nature, each named.
 */
function fidelityGap(
  a: ReturnType<typeof contextOf>[],
  b: ReturnType<typeof contextOf>[],
  dirs: readonly [string, string],
  profile: Pick<SubjectProfile, "identity" | "freshIds" | "unordered">,
): Error {
  const { identity = [], freshIds, unordered } = profile;
  // `inOrder`: the unordered lists left as the CLI listed them.
  const drop = (requests: ReturnType<typeof contextOf>[], inOrder = false) => {
    const kept = requests.map((r) => {
      const body = { ...(r.body as Record<string, unknown>) };
      for (const field of identity) delete body[field];
      return { ...r, body };
    });
    const reorder = unordered && !inOrder;
    if (!freshIds && !reorder) return kept;
    let text = JSON.stringify(kept);
    if (freshIds) text = text.replace(freshIds, "<fresh id>");
    if (reorder) text = unordered.apply(text);
    return JSON.parse(text) as typeof kept;
  };
  // Both directories in both: a resumed history may still name the original's (said below, never silently).
  const left = withoutDirs(drop(a), dirs);
  const right = withoutDirs(drop(b), dirs);
  if (!isDeepStrictEqual(left, right))
    return new Error(
      `the restored session sent a different request, also with its directory and identity fields set aside: ${firstDifference(left, right)}`,
    );
  const differed: string[] = [];
  if (unordered && !isDeepStrictEqual(withoutDirs(drop(a, true), dirs), withoutDirs(drop(b, true), dirs)))
    differed.push(unordered.what);
  const dirOnly = [withoutDirs(a, dirs), withoutDirs(b, dirs)] as const;
  if (!isDeepStrictEqual(drop(a), drop(b)))
    differed.push(`its directory (${dirs[0]} vs ${dirs[1]}), which the harness puts in the model's context`);
  const stale = JSON.stringify(b).split(dirs[0]).length - 1;
  if (stale > 0)
    differed.push(
      `the restored session's requests still name the original's directory ${stale} time(s) (the resumed history holds it)`,
    );
  for (const field of identity) {
    const [x, y] = dirOnly.map((rs) =>
      JSON.stringify(rs.map((r) => (r.body as Record<string, unknown>)[field])),
    );
    const cut = (text: string | undefined) => (text && text.length > 100 ? `${text.slice(0, 100)}…` : text);
    if (x !== y) differed.push(`request field "${field}" (the CLI's own identity: ${cut(x)} vs ${cut(y)})`);
  }
  if (freshIds) {
    const ids = (requests: unknown[]) => new Set(JSON.stringify(requests).match(freshIds) ?? []);
    const [x, y] = [ids(a), ids(b)];
    const only = (from: Set<string>, other: Set<string>) => [...from].filter((id) => !other.has(id));
    const [ox, oy] = [only(x, y), only(y, x)];
    if (ox.length + oy.length > 0)
      differed.push(
        `the ids the CLI minted for the new turn's items (${ox.join(", ") || "none"} vs ${oy.join(", ") || "none"})`,
      );
  }
  return new Differs(
    `the same conversation; the restored session's requests differ only by ${differed.join("; and ")}`,
  );
}

/** The requests with the sessions' directories (also in the dash-encoded form some CLIs name files by) as one token. */
function withoutDirs<T>(requests: T[], dirs: readonly string[]): T[] {
  let text = JSON.stringify(requests);
  for (const dir of dirs) {
    const encoded = dir.replace(/[^A-Za-z0-9]/g, "-");
    text = text.split(dir).join("<native dir>").split(encoded).join("<native dir>");
  }
  return JSON.parse(text) as T[];
}

function firstDifference(a: unknown[], b: unknown[]): string {
  const left = JSON.stringify(a);
  const right = JSON.stringify(b);
  let i = 0;
  while (i < left.length && left[i] === right[i]) i++;
  return `at character ${i}: …${left.slice(Math.max(0, i - 40), i + 60)}… vs …${right.slice(Math.max(0, i - 40), i + 60)}…`;
}

// The request desk: one id names one waiting request. A second request under a pending id is refused (it would
// take over the first one's wait), and an interrupt wakes a turn's waiter whatever became of its request.
import { describe, expect, it } from "vitest";
import type { NewEvent, SessionEvent } from "../protocol/events.js";
import { PendingRequests } from "./pending.js";
import { PermissionRules } from "./permissions.js";
import { RequestDesk } from "./request-desk.js";

/** A desk over an in-memory log: every append is observed by the pending index, as a session's log does. */
function desk() {
  const pending = new PendingRequests();
  const log: NewEvent[] = [];
  /** Events the log refuses, as a store refuses one too large for it. */
  const refuse = { when: (_event: NewEvent) => false };
  /** Writes of events `hold.when` picks wait for `hold.until` to be durable; the index sees them when sent. */
  const hold = { when: (_event: NewEvent) => false, until: Promise.resolve() };
  /** The last write sent: each is durable after the one before it, as a log keeps them in order. */
  let last: Promise<unknown> = Promise.resolve();
  const append = async (events: NewEvent[]) => {
    if (events.some((event) => refuse.when(event))) throw new Error("the store refused the write");
    // Observed when sent, as the session's LogWriter does, before the write is durable.
    for (const event of events) pending.observe(event);
    const before = last;
    const written = (async () => {
      await before;
      if (events.some((event) => hold.when(event))) await hold.until;
      log.push(...events);
    })();
    last = written;
    await written;
    return events as SessionEvent[];
  };
  const requests = new RequestDesk({ pending, permissions: new PermissionRules({ default: "ask" }), append });
  /** Resolves once an event of `type` is in the log. */
  const logged = async (type: string) => {
    while (!log.some((e) => e.type === type)) await new Promise((r) => setImmediate(r));
  };
  return { requests, pending, log, append, logged, refuse, hold };
}

describe("RequestDesk", () => {
  it("refuses a second request under a pending id, and the first one is still answered", async () => {
    const { requests, log, logged } = desk();
    const turn = new AbortController();
    const first = requests.permit("t1", { tool: "echo" }, turn.signal, { id: "r1" });
    await logged("permission.requested");
    expect(requests.asking("r1")).toBe(true);
    // Same id again, as a permission request and as a question: both refused, nothing logged for them.
    await expect(requests.permit("t1", { tool: "other" }, turn.signal, { id: "r1" })).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining('"r1" is already pending'),
    });
    await expect(requests.ask("t1", { question: "why?" }, turn.signal, { id: "r1" })).rejects.toMatchObject({
      code: "conflict",
    });
    expect(log.filter((e) => e.type.endsWith(".requested"))).toHaveLength(1);
    await requests.reply("r1", { decision: "allow" }, "s1");
    await expect(first).resolves.toEqual({ id: "r1", decision: "allow" });
    await expect(requests.reply("r1", { decision: "allow" }, "s1")).rejects.toMatchObject({
      code: "conflict",
    });
    // Answered, the id is free again.
    expect(requests.asking("r1")).toBe(false);
  });

  it("wakes a waiter on interrupt even when its request was resolved behind the desk's back", async () => {
    const { requests, append, log, logged } = desk();
    const turn = new AbortController();
    const waiting = requests.ask("t1", { question: "why?" }, turn.signal, { id: "q1" });
    await logged("question.requested");
    // An answer logged without the desk (another writer of the log): nobody claims the waiter.
    await append([{ type: "question.answered", turn: "t1", data: { id: "q1", answer: "because" } }]);
    turn.abort();
    await expect(waiting).resolves.toBe("");
    // The request was answered once already; the interrupt logs no second answer.
    expect(log.filter((e) => e.type === "question.answered")).toHaveLength(1);
  });

  it("gives up a pending request on interrupt: the fallback is logged and the turn's waiter woken", async () => {
    const { requests, log, logged } = desk();
    const turn = new AbortController();
    const waiting = requests.permit("t1", { tool: "echo" }, turn.signal, { id: "p1" });
    await logged("permission.requested");
    turn.abort();
    await expect(waiting).resolves.toMatchObject({ decision: "deny", reason: "the turn was interrupted" });
    expect(log.at(-1)).toMatchObject({ type: "permission.resolved", data: { id: "p1", decision: "deny" } });
    expect(requests.asking("p1")).toBe(false);
  });

  it("denies a request whose answer the log refused, instead of leaving its turn waiting for good", async () => {
    const { requests, log, logged, refuse } = desk();
    const turn = new AbortController();
    const waiting = requests.permit("t1", { tool: "echo" }, turn.signal, { id: "p1" });
    await logged("permission.requested");
    refuse.when = (event) => event.type === "permission.resolved" && event.data.reason === "huge";
    await expect(requests.reply("p1", { decision: "allow", reason: "huge" }, "s1")).rejects.toThrow(
      "the store refused the write",
    );
    await expect(waiting).resolves.toMatchObject({
      decision: "deny",
      reason: expect.stringContaining("the answer could not be logged: the store refused the write"),
    });
    expect(log.filter((e) => e.type === "permission.resolved")).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ id: "p1", decision: "deny" }) }),
    ]);
    expect(requests.asking("p1")).toBe(false);
  });
});

describe("RequestDesk declined", () => {
  it("refuses an answer to a question that is declined and answered at once, and takes the decline", async () => {
    const { requests, logged } = desk();
    const asked = requests.ask("t1", { question: "Colour?" }, new AbortController().signal, { id: "q" });
    await logged("question.requested");
    await expect(requests.reply("q", { answer: "red", declined: true }, "s1")).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringContaining('send {"answer": "", "declined": true}'),
    });
    let told: unknown;
    await requests.reply("q", { answer: "", declined: true }, "s1");
    await expect(asked).resolves.toBe("");
    const again = requests.ask("t1", { question: "Size?" }, new AbortController().signal, {
      id: "q2",
      told: (ending) => {
        told = ending;
      },
    });
    await logged("question.answered");
    await requests.reply("q2", { answer: "", declined: true }, "s1");
    await expect(again).resolves.toBe("");
    expect(told).toEqual({ declined: true });
  });
});

describe("RequestDesk answer not logged", () => {
  it("logs its fallback as the host's, unanswered and cancelled, not a person's answer nor an expiry", async () => {
    const { requests, log, logged, refuse } = desk();
    const turn = new AbortController();
    let told: unknown;
    const permitted = requests.permit("t1", { tool: "echo" }, turn.signal, { id: "p" });
    const asked = requests.ask("t1", { question: "Colour?" }, turn.signal, {
      id: "q",
      told: (ending) => {
        told = ending;
      },
    });
    await logged("question.requested");
    await logged("permission.requested");
    refuse.when = (event) => "reason" in event.data && event.data.reason === "huge";
    for (const [id, body] of [
      ["p", { decision: "allow", reason: "huge" }],
      ["q", { answer: "red", reason: "huge" }],
    ] as const) {
      await expect(requests.reply(id, body, "s1")).rejects.toThrow("the store refused the write");
    }
    await expect(permitted).resolves.toMatchObject({ decision: "deny", unanswered: "cancelled" });
    await expect(asked).resolves.toBe("");
    expect(told).toEqual({ unanswered: "cancelled" });
    expect(log.filter((e) => e.type.endsWith(".resolved") || e.type === "question.answered")).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ id: "p", decision: "deny", unanswered: "cancelled" }),
      }),
      expect.objectContaining({
        data: expect.objectContaining({ id: "q", answer: "", unanswered: "cancelled" }),
      }),
    ]);
  });
});

describe("RequestDesk races", () => {
  it("logs exactly one outcome when an answer races an interrupt or the wait, and the turn gets that one", async () => {
    const { requests, log } = desk();
    const outcomes = ["answer first", "interrupt first", "wait of 1 ms"].map(async (how, i) => {
      const turn = new AbortController();
      const id = `p${i}`;
      const waiting = requests.permit("t1", { tool: "echo" }, turn.signal, {
        id,
        ...(how === "wait of 1 ms" ? { waitMs: 1 } : {}),
      });
      // Until the desk waits on it (its timer and the turn's abort set), not only until it is logged. A 1 ms wait
      // may have run out already on a loaded machine; then the request is resolved and never waited on again.
      const settled = () => log.some((e) => e.type === "permission.resolved" && e.data.id === id);
      while (!requests.timesOf(id) && !settled()) await new Promise((r) => setImmediate(r));
      if (how === "interrupt first") turn.abort();
      const replied = requests.reply(id, { decision: "allow" }, "s1").catch(() => "refused");
      if (how === "answer first") turn.abort();
      const [verdict, reply] = await Promise.all([waiting, replied]);
      const resolved = log.filter((e) => e.type === "permission.resolved" && e.data.id === id);
      expect(resolved, how).toHaveLength(1);
      expect(resolved[0]!.data, how).toMatchObject({ decision: verdict.decision });
      expect(reply === "refused", how).toBe(verdict.decision === "deny");
      return verdict.decision;
    });
    const decisions = await Promise.all(outcomes);
    expect(decisions.slice(0, 2)).toEqual(["allow", "deny"]);
  });
});

describe("RequestDesk interrupt before its request is durable", () => {
  it.each(["before it is asked", "while it is logged"])(
    "refuses an answer sent while the request's write is in flight, the turn interrupted %s",
    async (when) => {
      const { requests, log, logged, hold } = desk();
      let release = () => {};
      hold.when = (event) => event.type === "permission.requested";
      hold.until = new Promise((resolve) => {
        release = resolve;
      });
      const turn = new AbortController();
      // The interrupt is acknowledged (its signal aborted) before the answer is sent.
      if (when === "before it is asked") turn.abort();
      const waiting = requests.permit("t1", { tool: "deploy" }, turn.signal, { id: "p1" });
      if (when === "while it is logged") turn.abort();
      const replied = requests.reply("p1", { decision: "allow" }, "s1").then(
        () => "taken",
        (err: Error) => err.message,
      );
      release();
      await expect(waiting).resolves.toMatchObject({ decision: "deny", unanswered: "cancelled" });
      await expect(replied).resolves.toMatch(/no pending permission request or question "p1"/);
      await logged("permission.resolved");
      const resolved = log.filter((e) => e.type === "permission.resolved");
      expect(resolved).toEqual([
        expect.objectContaining({
          data: expect.objectContaining({ id: "p1", decision: "deny", reason: "the turn was interrupted" }),
        }),
      ]);
      expect(log.map((e) => e.type)).toEqual(["permission.requested", "permission.resolved"]);
    },
  );
});

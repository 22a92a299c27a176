// The app-server mapper on real Codex 0.171.0 captures: a shell turn, an approved `touch`, an interrupted slow
// turn, then a resumed process.
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { unshareWords } from "../../testing/netns/sandbox.js";
import { transcriptLines } from "../../testing/transcripts.js";
import type { CliEvent } from "../cli/events.js";
import { locateCli } from "../cli/locate.js";
import { approvalFor, questionsFor } from "./approvals.js";
import { CodexNotificationMapper, type CodexSignal } from "./parser.js";
import { diffTrees, generateProtocol, PROTOCOL_DIR } from "./protocol-gen.js";

// biome-ignore lint/suspicious/noExplicitAny: decoded wire JSON
type Json = any;

function parse(path: string): { signals: CodexSignal[]; requests: Json[] } {
  const mapper = new CodexNotificationMapper();
  const signals: CodexSignal[] = [];
  const requests: Json[] = [];
  for (const line of transcriptLines(path) as Json[]) {
    if (typeof line.method !== "string") continue;
    if (line.id !== undefined) requests.push(line);
    else signals.push(...mapper.handle(line.method, line.params));
  }
  return { signals, requests };
}

function turns(signals: CodexSignal[]): CodexSignal[][] {
  const out: CodexSignal[][] = [[]];
  for (const signal of signals) {
    out.at(-1)!.push(signal);
    if (signal.kind === "end") out.push([]);
  }
  return out.filter((t) => t.length > 0);
}

const events = (signals: CodexSignal[]): CliEvent[] =>
  signals.flatMap((s) => (s.kind === "event" ? [s.event] : []));
const text = (signals: CodexSignal[]) =>
  events(signals)
    .flatMap((e) => (e.type === "assistant.delta" ? [e.data.text] : []))
    .join("");

describe("codex app-server transcript", () => {
  const { signals, requests } = parse("codex/app-server-a.jsonl");
  const [first, second, third] = turns(signals.filter((s) => s.kind !== "warning"));

  it("maps a shell turn: exec_command call and result, deltas, a message with the call's usage", () => {
    expect(first![0]).toMatchObject({ kind: "turn-started" });
    const evs = events(first!);
    expect(evs.map((e) => e.type)).toEqual([
      "tool.call",
      "tool.result",
      "assistant.delta",
      "assistant.delta",
      "assistant.message",
    ]);
    expect(evs[0]?.data).toMatchObject({
      id: "call_fake_1",
      name: "exec_command",
      arguments: { command: "/bin/bash -lc 'ls -1'" },
    });
    expect(evs[1]?.data).toMatchObject({
      id: "call_fake_1",
      content: [{ text: "README.md\nindex.js\n" }],
      is_error: false,
    });
    expect(evs[4]?.data).toEqual({
      text: "done",
      usage: { input: 42, output: 7, cache_read: 0, cache_write: 0 },
    });
    expect(first!.at(-1)).toMatchObject({ kind: "end", end: { outcome: "completed" } });
    expect(text(first!)).toBe("done");
  });

  it("turns the approval request into an exec_command permission, answered accept or decline", () => {
    const approval = approvalFor(requests[0].method, requests[0].params);
    expect(approval?.use).toMatchObject({
      tool: "exec_command",
      arguments: { command: "/bin/bash -lc 'touch created-by-agent.txt'" },
    });
    // Named by its item id, the id its tool.call has: a client shows the request on that call.
    const call = events(second!).find((e) => e.type === "tool.call");
    expect(approval?.use.tool_call_id).toBe((call!.data as { id: string }).id);
    expect(approval?.answer({ decision: "allow" })).toEqual({ decision: "accept" });
    expect(approval?.answer({ decision: "deny" })).toEqual({ decision: "decline" });
    expect(events(second!).filter((e) => e.type === "tool.result")[0]?.data).toMatchObject({
      is_error: false,
    });
  });

  it("ends an interrupted turn as aborted, keeping the streamed text as an aborted message", () => {
    expect(third!.at(-1)).toMatchObject({ kind: "end", end: { outcome: "aborted" } });
    const message = events(third!).find((e) => e.type === "assistant.message");
    expect(message?.data).toEqual({ text: text(third!), stop_reason: "aborted" });
    expect(text(third!)).toMatch(/^tick0 tick1 /);
  });

  it("maps the resumed process's turn", () => {
    const resumed = parse("codex/app-server-b-resume.jsonl").signals;
    expect(text(resumed)).toBe("hello from fake");
    expect(resumed.at(-1)).toMatchObject({ kind: "end", end: { outcome: "completed" } });
  });

  it("passes on Codex's own warnings, the config warning at start and the model warning of each turn", () => {
    const warnings = signals.flatMap((s) => (s.kind === "warning" ? [s.message] : []));
    expect(warnings[0]).toMatch(/^Codex could not find bubblewrap on PATH/);
    expect(warnings.slice(1)).toEqual(
      Array(3).fill(expect.stringMatching(/^Model metadata for `fake-model` not found/)),
    );
    const mapper = new CodexNotificationMapper();
    mapper.threadId = "mine";
    expect(
      mapper.handle("configWarning", {
        summary: "unknown key",
        details: "remove it",
        path: "/h/config.toml",
        range: { start: { line: 3, column: 1 }, end: { line: 3, column: 9 } },
      }),
    ).toEqual([{ kind: "warning", message: "unknown key: remove it (/h/config.toml:3)" }]);
    expect(mapper.handle("warning", { threadId: "other", message: "not ours" })).toEqual([]);
  });

  it("skips other threads, unknown methods, and reports a failed turn as provider_error", () => {
    const mapper = new CodexNotificationMapper();
    mapper.threadId = "mine";
    expect(mapper.handle("item/agentMessage/delta", { threadId: "other", itemId: "x", delta: "hi" })).toEqual(
      [],
    );
    expect(mapper.handle("thread/realtime/sdp", { threadId: "mine" })).toEqual([]);
    mapper.handle("error", {
      threadId: "mine",
      willRetry: false,
      error: { message: "429 Too Many Requests" },
    });
    const end = mapper.handle("turn/completed", {
      threadId: "mine",
      turn: { id: "t", status: "failed", error: null },
    });
    expect(end).toEqual([
      {
        kind: "end",
        turnId: "t",
        end: { outcome: "failed", code: "provider_error", message: "codex: 429 Too Many Requests" },
      },
    ]);
  });
});

describe("codex requests to the client", () => {
  it("maps request_user_input to Brain questions and answers by question id", () => {
    const set = questionsFor("item/tool/requestUserInput", {
      questions: [
        {
          id: "q1",
          header: "Branch",
          question: "Which one?",
          isOther: false,
          isSecret: false,
          options: [{ label: "main", description: "" }],
        },
        { id: "q2", header: "", question: "Why?", isOther: true, isSecret: false, options: null },
      ],
    });
    expect(set?.questions).toEqual([
      { id: "q1", question: "Branch: Which one?", options: ["main"] },
      { id: "q2", question: "Why?" },
    ]);
    expect(set?.answer(new Map([["q1", "main"]]))).toEqual({
      answers: { q1: { answers: ["main"] }, q2: { answers: [""] } },
    });
  });

  it("maps file-change and permission approvals; leaves other requests to be refused", () => {
    expect(approvalFor("item/fileChange/requestApproval", { reason: "write" })?.use).toMatchObject({
      tool: "apply_patch",
      reason: "write",
    });
    const permissions = approvalFor("item/permissions/requestApproval", {
      permissions: { network: { enabled: true }, fileSystem: null },
    });
    expect(permissions?.answer({ decision: "allow" })).toEqual({
      permissions: { network: { enabled: true } },
      scope: "turn",
    });
    expect(permissions?.answer({ decision: "deny" })).toEqual({ permissions: {}, scope: "turn" });
    expect(approvalFor("account/chatgptAuthTokens/refresh", {})).toBeUndefined();
  });
});

describe.runIf(locateCli("codex"))("the committed protocol types", () => {
  it("are what the installed codex generates (regenerate: node dist/src/harnesses/codex/protocol-gen.js)", () => {
    const fresh = generateProtocol(unshareWords());
    try {
      expect(diffTrees(fresh, PROTOCOL_DIR)).toEqual([]);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

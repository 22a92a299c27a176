// A newer Codex sends app-server notifications whose method this Brain's protocol does not have. They are skipped,
// never fatal, and each method is said once: a Codex that renamed its agent message deltas would otherwise look
// like a turn that went quiet. What the real Codex sends is all known: its captures, and a real Codex's turn under
// unshare -n, say nothing.
import { expect, it, vi } from "vitest";
import { amid, expectRealTurnSaysNoTypeUnknown } from "../../testing/cli-newer-events.js";
import { transcriptLines } from "../../testing/transcripts.js";
import { locateCli } from "../cli/locate.js";
import { CodexNotificationMapper, type CodexSignal } from "./parser.js";
import { codexCase } from "./testing/case.js";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

// biome-ignore lint/suspicious/noExplicitAny: captured messages
type Json = any;

/** The notifications of a capture (its lines with a method and no id). */
const notifications = (path: string): Json[] =>
  (transcriptLines(path) as Json[]).filter((l) => typeof l.method === "string" && l.id === undefined);
const parse = (lines: Json[]): CodexSignal[] => {
  const mapper = new CodexNotificationMapper();
  return lines.flatMap((l) => mapper.handle(l.method, l.params));
};
const unknown = (signals: CodexSignal[]) =>
  signals.flatMap((s) => (s.kind === "warning" && s.message.includes("does not know") ? [s.message] : []));

it("knows every method real Codex sent: none is said to be unknown", () => {
  const all = ["codex/app-server-a.jsonl", "codex/app-server-b-resume.jsonl"].flatMap((p) =>
    parse(notifications(p)),
  );
  expect(all.length).toBeGreaterThan(0);
  expect(unknown(all)).toEqual([]);
});

it("skips a notification of a method it does not know, saying it once, and reads the rest", () => {
  const captured = notifications("codex/app-server-a.jsonl");
  const renamed = { method: "item/agentMessage/textDelta", params: { delta: "hi", itemId: "x" } };
  const signals = parse(amid([renamed], captured, 10));
  expect(unknown(signals)).toEqual([
    'codex wrote a notification of a type Brain does not know ("item/agentMessage/textDelta"), skipped; a codex newer than Brain knows? Further notifications of that type are skipped silently',
  ]);
  expect(signals.filter((s) => unknown([s]).length === 0)).toEqual(parse(captured));
});

it.runIf(locateCli("codex"))("a real Codex's turn with a tool call says no method is unknown", async () => {
  await expectRealTurnSaysNoTypeUnknown(codexCase);
});

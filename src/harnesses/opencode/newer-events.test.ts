// A newer opencode says things this Brain does not know: `/event` types and message part types it has no case for.
// They are skipped, never fatal, and each type is said once: an opencode that renamed its text deltas would
// otherwise look like a turn that went quiet. What opencode 1.18.33 writes is all known: its captures, and a real
// opencode's turn under unshare -n, say nothing.
import { expect, it, vi } from "vitest";
import { amid, expectRealTurnSaysNoTypeUnknown } from "../../testing/cli-newer-events.js";
import { transcriptLines } from "../../testing/transcripts.js";
import { locateCli } from "../cli/locate.js";
import { OpencodeEventMapper, type OpencodeSignal } from "./parser.js";
import { opencodeCase } from "./testing/case.js";

// opencode's 185 MB binary can take tens of seconds to start on a loaded machine.
vi.setConfig({ testTimeout: 400_000, hookTimeout: 60_000 });

const SESSION = "ses_dd474357cffeBoXosp62NbmHJ6";
const parse = (lines: unknown[]): OpencodeSignal[] => {
  const mapper = new OpencodeEventMapper(SESSION);
  return lines.flatMap((line) => mapper.handle(line));
};
const unknown = (signals: OpencodeSignal[]) => signals.filter((s) => s.kind === "unknown");

it("knows every event and part type real opencode wrote: none is said to be unknown", () => {
  const all = ["opencode/sse-1.jsonl", "opencode/sse-2.jsonl"].flatMap((path) =>
    parse(transcriptLines(path)),
  );
  expect(all.length).toBeGreaterThan(0);
  expect(unknown(all)).toEqual([]);
});

it("skips an event and a part of types it does not know, saying each type once, and reads the rest", () => {
  const captured = transcriptLines("opencode/sse-1.jsonl");
  const renamed = {
    type: "message.part.text.delta",
    properties: { sessionID: SESSION, messageID: "msg_x", partID: "prt_x", delta: "hi" },
  };
  const part = {
    type: "message.part.updated",
    properties: { part: { id: "prt_y", sessionID: SESSION, messageID: "msg_x", type: "citation" } },
  };
  const signals = parse(amid([renamed, part], captured, 40));
  expect(unknown(signals)).toEqual([
    { kind: "unknown", type: "message.part.text.delta" },
    { kind: "unknown", type: "citation", part: true },
  ]);
  expect(signals.filter((s) => s.kind !== "unknown")).toEqual(parse(captured));
});

it.runIf(locateCli("opencode"))(
  "a real opencode's turn with a tool call says no type is unknown",
  async () => {
    await expectRealTurnSaysNoTypeUnknown(opencodeCase);
  },
);

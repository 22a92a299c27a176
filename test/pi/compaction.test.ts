// Compaction on a long conversation, in each wire format: once the context passes the configured share of the
// window, the runner has the model summarize the older part and appends a compaction entry; the file only
// grows, the next request carries the summary instead of the old turns, and a fork rebuilds the same context.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SUMMARY_MARKER } from "../../runners/pi/compaction.js";
import type { TestBrain } from "../../src/testing/brain.js";
import { lastUserText } from "../../src/testing/fake-provider/index.js";
import {
  API_KEY,
  bodyText,
  FORMATS,
  requestShape,
  transcript,
  usePiBed,
  type WireFormat,
} from "./helpers.js";

const SUMMARY = "SUMMARY OF THE TALK: the user counted turns.";

let t: TestBrain;
const bed = usePiBed((fake) => {
  // The summarization request is recognisable by its marker; everything else is echoed back.
  fake.setFallback((req) =>
    bodyText(req).includes(SUMMARY_MARKER) ? { text: SUMMARY } : { text: `echo: ${lastUserText(req)}` },
  );
});

const filler = "lorem ipsum dolor sit amet ".repeat(24);

describe.each(FORMATS)("runners/pi compaction on $api", (format) => {
  it("compacts past the threshold as an appended entry, and a fork rebuilds the same compacted context", async () => {
    t = bed.brain(format);
    const options = { context_window: 2_000, compaction_threshold: 0.5, compaction_keep_tokens: 150 };
    const session = await t.brain.create({ harness: "pi", config: { model: format.model, options } });
    const file = join(t.store.paths(session.id).native, "conversation.jsonl");

    let compactedAfter = 0;
    for (let turn = 1; turn <= 8 && !compactedAfter; turn++) {
      const before = turn > 1 ? readFileSync(file) : Buffer.alloc(0);
      expect((await (await session.prompt(`turn ${turn}: ${filler}`)).settled).status).toBe("completed");
      // Append-only, compaction included: every earlier byte is still there.
      expect(readFileSync(file).subarray(0, before.length)).toEqual(before);
      if (transcript(t, session).some((e) => e.type === "compaction")) compactedAfter = turn;
    }
    expect(compactedAfter).toBeGreaterThan(1);
    const entry = transcript(t, session).find((e) => e.type === "compaction")!;
    expect(entry).toMatchObject({ summary: SUMMARY, first_kept: expect.any(Number) });
    expect(entry.tokens_before).toBeGreaterThan(1_000);
    const summaryRequest = bed.fake.requests.find((r) => bodyText(r).includes(SUMMARY_MARKER))!;
    expect(bodyText(summaryRequest)).toContain("turn 1:");

    // The next request: the summary instead of the early turns, the last exchange kept verbatim.
    bed.fake.reset();
    await (await session.prompt("What now?")).settled;
    const next = bodyText(bed.fake.requests[0]);
    expect(next).toContain("<summary>");
    expect(next).toContain(SUMMARY);
    expect(next).toContain(`turn ${compactedAfter}:`);
    expect(next).not.toContain("turn 1:");
    const original = bed.fake.requests.map(requestShape);

    // A fork from a checkpoint taken before that turn sends exactly the same request.
    const checkpoint = await session.checkpoint();
    const fork = await t.brain.fork(session.id, checkpoint.id);
    bed.fake.reset();
    await (await session.prompt("And then?")).settled;
    const again = bed.fake.requests.map(requestShape);
    bed.fake.reset();
    await (await fork.prompt("And then?")).settled;
    expect(bed.fake.requests.map(requestShape)).toEqual(again);
    expect(bodyText(bed.fake.requests[0])).toContain(SUMMARY);
    expect(original).toHaveLength(1);
  });
});

// A summary is the model's words about the conversation, and a model repeats what it saw: a key pasted into a
// turn comes back in the summary. The transcript keeps the key out of messages; the compaction entry is written
// to the same file, and a key there makes every checkpoint (and so fork) of the session refused.
const keyed = usePiBed((fake) => {
  fake.setFallback((req) =>
    bodyText(req).includes(SUMMARY_MARKER)
      ? { text: `${SUMMARY} They pasted the key ${API_KEY}.` }
      : { text: `echo: ${lastUserText(req)}` },
  );
});

const [completions] = FORMATS as [WireFormat];

describe("runners/pi compaction of a conversation that held the key", () => {
  it("writes the summary with the key redacted, and the session still checkpoints", async () => {
    t = keyed.brain(completions);
    const options = { context_window: 2_000, compaction_threshold: 0.5, compaction_keep_tokens: 150 };
    const session = await t.brain.create({ harness: "pi", config: { model: completions.model, options } });
    for (let turn = 1; turn <= 8; turn++) {
      await (await session.prompt(`turn ${turn}: my key is ${API_KEY}. ${filler}`)).settled;
      if (transcript(t, session).some((e) => e.type === "compaction")) break;
    }
    const entry = transcript(t, session).find((e) => e.type === "compaction");
    expect(entry?.summary).toContain(SUMMARY);
    expect(JSON.stringify(transcript(t, session))).not.toContain(API_KEY);
    expect((await session.checkpoint()).files).toHaveLength(1);
  });
});

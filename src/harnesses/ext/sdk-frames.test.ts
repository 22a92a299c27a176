// Brain reads an extension host's lines up to the 4 MiB frame cap: the TypeScript SDK keeps every line it writes
// under it, so an agent's long text reaches the session instead of breaking the host.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../core/session.js";
import { events, makeBrain, type TestBrain, tempDir, textOf } from "../../testing/brain.js";
import { asked, catalogFactories, tsAgent, writeExtension } from "../../testing/nui.js";
import { installExtension } from "./install.js";

const dirs: string[] = [];
let t: TestBrain | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
}

it.each(["stdio", "tcp"] as const)(
  "a text chunk over 4 MiB from an agent on sdk/ts reaches the session whole (%s)",
  async (transport) => {
    const home = scratch("brain-ext-home-");
    const source = writeExtension(scratch("brain-ext-src-"), `ts-${transport}`, {
      transport,
      command: ["node", tsAgent, transport],
    });
    await installExtension(source, join(home, "extensions"));
    const { factories, problems } = catalogFactories({
      brainHome: home,
      hostHome: scratch("brain-ext-hosthome-"),
    });
    expect(problems).toEqual([]);
    t = makeBrain({ factories, home });
    const session = await t.brain.create({ harness: `ext:ts-${transport}/echo` });
    const turn = await session.prompt("huge");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(session), turn.turn)).toBe("h".repeat(5 << 20));
    // The host is still the one serving the session.
    expect((await (await session.prompt("next")).settled).status).toBe("completed");
  },
);

describe.each(["stdio", "tcp"] as const)(
  "an event over 4 MiB that cannot be split, from sdk/ts (%s)",
  (transport) => {
    async function sessionOn() {
      const home = scratch("brain-ext-home-");
      const source = writeExtension(scratch("brain-ext-src-"), `ts-${transport}`, {
        transport,
        command: ["node", tsAgent, transport],
      });
      await installExtension(source, join(home, "extensions"));
      const { factories } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hosthome-") });
      t = makeBrain({ factories, home });
      return t.brain.create({ harness: `ext:ts-${transport}/echo` });
    }

    async function hostServesOn(session: Session) {
      expect((await (await session.prompt("next")).settled).status).toBe("completed");
    }

    it("an error message is cut short, saying so, and the host serves on", async () => {
      const session = await sessionOn();
      const outcome = await (await session.prompt("huge-error")).settled;
      expect(outcome.status).toBe("failed");
      // Booleans: a failure must not print megabytes.
      const message = outcome.error?.message ?? "";
      expect(message.length < 1 << 20 && message.includes(`: ${"e".repeat(1000)}`)).toBe(true);
      expect(message.includes("cut short: the whole error message took")).toBe(true);
      await hostServesOn(session);
    });

    it("a tool result is cut short, saying so, and the turn goes on", async () => {
      const session = await sessionOn();
      const turn = await session.prompt("huge-result");
      expect((await turn.settled).status).toBe("completed");
      const all = await events(session);
      const result = all.find((e) => e.type === "tool.result");
      const text = (result!.data as { content: { text: string }[] }).content[0]!.text;
      expect(text.length < 1 << 20 && text.startsWith("r".repeat(1000))).toBe(true);
      expect(text.includes("cut short: the whole tool result took")).toBe(true);
      expect(textOf(all, turn.turn)).toBe("dumped");
      await hostServesOn(session);
    });

    it("an image fails its run with an error naming it, and the host serves on", async () => {
      const session = await sessionOn();
      const outcome = await (await session.prompt("huge-image")).settled;
      expect(outcome.status).toBe("failed");
      expect(outcome.error?.message).toMatch(/"image" event of \d+ bytes is over the 4 MiB line/);
      await hostServesOn(session);
    });
  },
);

/** The test's Brain, with the TS SDK's agent installed as the extension ts-stdio (stdio transport). */
async function tsStdioBrain(): Promise<TestBrain> {
  const home = scratch("brain-ext-home-");
  const source = writeExtension(scratch("brain-ext-src-"), "ts-stdio", {
    transport: "stdio",
    command: ["node", tsAgent, "stdio"],
  });
  await installExtension(source, join(home, "extensions"));
  const { factories } = catalogFactories({ brainHome: home, hostHome: scratch("brain-ext-hosthome-") });
  t = makeBrain({ factories, home });
  return t;
}

// Each is under the limit a prompt and a config have; together they make a harness.run line over 4 MiB, which a
// host on sdk/ts cannot read: it got no reply, and the turn waited for good.
it("a harness.run over the 4 MiB line a host reads fails its turn, naming what to shorten, and the host serves on", async () => {
  const { brain } = await tsStdioBrain();
  const session = await brain.create({
    harness: "ext:ts-stdio/echo",
    config: { system_prompt: "s".repeat(2.5 * (1 << 20)) },
  });
  const outcome = await (await session.prompt("p".repeat(2.5 * (1 << 20)))).settled;
  expect(outcome).toMatchObject({ status: "failed", error: { code: "brain_error" } });
  expect(outcome.error?.message).toMatch(
    /harness\.run of \d+ bytes is over the 4 MiB line an extension host reads: shorten the prompt or the system prompt/,
  );
  expect((await (await session.prompt("next")).settled).status).toBe("completed");
});

// The host asks over the protocol (no NUI_API_URL) and the person's answer is longer than a line the host reads.
it("an answer too long for a host's line reaches a host that asked over the protocol as cancelled, saying why", async () => {
  const { brain } = await tsStdioBrain();
  const session = await brain.create({
    harness: "ext:ts-stdio/echo",
    config: { options: { env: { NUI_API_URL: "" } } },
  });
  const turn = await session.prompt("ask");
  const question = await asked(session);
  await session.answer({
    type: "question.answered",
    data: { id: question.data.id, answer: "a".repeat(5 << 20) },
  });
  expect(await turn.settled).toMatchObject({ status: "completed" });
  expect(textOf(await events(session), turn.turn)).toBe(
    'status=cancelled answers={"reason":"the answer was longer than the 4 MiB line a host reads; ask for a shorter one"}',
  );
});

// NUI_API_URL's path is the secret that reaches the session's requests; the run's error is logged for its clients.
it("a HITL request Brain refuses fails the run of an agent on sdk/ts naming its path, never NUI_API_URL", async () => {
  const { brain } = await tsStdioBrain();
  const session = await brain.create({ harness: "ext:ts-stdio/echo" });
  const outcome = await (await session.prompt("ask-too-many")).settled;
  expect(outcome).toMatchObject({ status: "failed", error: { code: "provider_error" } });
  const message = outcome.error?.message ?? "";
  expect(message).toMatch(/HITL POST NUI_API_URL\/api\/hitl\/requests failed \(400\): .*at most 64/);
  expect(message).not.toMatch(/127\.0\.0\.1|http:/);
});

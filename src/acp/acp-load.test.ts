// session/load of a fork and of a handoff: the editor gets the conversation the session came from (up to where it
// was taken: a fork's checkpoint, a handoff's seq), then the session's own, each message once.
import { methods } from "@agentclientprotocol/sdk";
import { expect, it } from "vitest";
import { connectEditor, type TestEditor } from "../testing/acp-editor.js";
import { collect, settled } from "../testing/http.js";
import { retireUpTo as retireLog } from "../testing/retired-log.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();

async function turn(id: string, text: string): Promise<void> {
  const client = t.client();
  await collect(client, id, settled((await client.prompt(id, text)).turn));
}

/** What the editor shows after loading `sessionId`: the user's messages and the agent's, each joined. */
async function loaded(sessionId: string): Promise<{ user: string[]; agent: string }> {
  const editor: TestEditor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
  try {
    await editor.ctx.request(methods.agent.session.load, { sessionId, cwd: "/", mcpServers: [] });
    const text = (kind: string) =>
      editor.updates
        .map((n) => n.update)
        .filter((u) => u.sessionUpdate === kind)
        .map((u) => (u as { content: { text?: string } }).content.text ?? "");
    return { user: text("user_message_chunk"), agent: text("agent_message_chunk").join("") };
  } finally {
    editor.child.kill("SIGKILL");
  }
}

/** A parent that said "one", was checkpointed, then said more; its fork from that checkpoint, which said "three". */
async function forkedAfterOne(): Promise<{ parent: string; fork: string }> {
  const client = t.client();
  const parent = (await client.create({ harness: "echo" })).id;
  await turn(parent, "one");
  const checkpoint = await client.checkpoint(parent);
  await turn(parent, "after the checkpoint");
  const fork = (await client.fork(parent, checkpoint.id)).id;
  await turn(fork, "three");
  return { parent, fork };
}

it("replays a fork's parent up to the fork's checkpoint, then the fork's own turns", async () => {
  const { fork } = await forkedAfterOne();

  const shown = await loaded(fork);
  expect(shown.user).toEqual(["one", "three"]);
  expect(shown.agent).toBe("echo #1: oneecho #2: three");
});

it("replays a handoff's source up to the handoff, and a deleted source leaves the session's own", async () => {
  const client = t.client();
  const source = (await client.create({ harness: "echo" })).id;
  await turn(source, "remember PAPAYA");
  const moved = (await client.handoff(source, "echo")).id;
  await turn(source, "said after the handoff");
  await turn(moved, "go on");

  const shown = await loaded(moved);
  expect(shown.user).toEqual(["remember PAPAYA", "go on"]);
  expect(shown.agent).toMatch(/^echo #1: remember PAPAYAecho #1: /);

  // Forced: the handoff reads its history from it (a plain delete is a 409 naming the handoff).
  await client.delete(source, { force: true });
  expect((await loaded(moved)).user).toEqual(["go on"]);
  // A new session under the deleted source's id is not where the conversation came from.
  const reused = await client.create({ harness: "echo", id: source });
  await turn(reused.id, "another conversation");
  expect((await loaded(moved)).user).toEqual(["go on"]);
});

/** Retention's work on a closed session: its log's events up to `seq` in a sealed segment, then dropped. */
const retireUpTo = (id: string, seq: number) => retireLog(t.home, id, seq);

it("replays a fork's parent when retention dropped the fork's first events, and none of the parent's after the fork when it dropped the checkpoint", async () => {
  const client = t.client();
  const { parent, fork } = await forkedAfterOne();
  await turn(fork, "four");
  await client.close(fork);
  await client.close(parent);

  // The fork's session.opened is gone: the parent was left out.
  await retireUpTo(fork, 2);
  expect((await loaded(fork)).user).toEqual(["one", "four"]);
  // The parent's checkpoint.created is gone: what it said after the fork was replayed as the fork's history.
  const { events } = await client.log(parent, 0, 1000);
  await retireUpTo(parent, events.find((e) => e.type === "checkpoint.created")!.seq);
  expect((await loaded(fork)).user).toEqual(["four"]);
});

it("stops replaying a long log when the editor withdraws session/load, answered cancelled", async () => {
  const client = t.client();
  const { id } = await client.create({ harness: "echo" });
  await turn(id, Array.from({ length: 20_000 }, (_, i) => `w${i}`).join(" "));
  const editor = await connectEditor(["--server", t.url, "--token", t.tokens.admin]);
  try {
    const withdraw = new AbortController();
    const load = editor.ctx.request(
      methods.agent.session.load,
      { sessionId: id, cwd: "/", mcpServers: [] },
      { cancellationSignal: withdraw.signal },
    );
    while (editor.updates.length < 100) await new Promise((resolve) => setTimeout(resolve, 5));
    withdraw.abort();
    // It replayed the whole log regardless, and answered as if loaded.
    await expect(load).rejects.toMatchObject({ code: -32800 });
    expect(editor.updates.length).toBeLessThan(20_000);
  } finally {
    editor.child.kill("SIGKILL");
  }
});

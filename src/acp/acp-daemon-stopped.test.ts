// `brain acp --server URL`, end to end, against a real `brain serve` process that hangs mid-turn (SIGSTOP): its
// connections stay open and nothing comes on the turn's event stream, not even the heartbeat. The stream is taken as
// dropped after $BRAIN_ACP_STREAM_SILENCE, its reconnects get no answer ($BRAIN_SERVER_TIMEOUT), and after
// $BRAIN_ACP_DAEMON_WAIT the prompt ends with reason "unreachable"; a later prompt is refused at once after a /healthz
// probe; once the daemon runs again (SIGCONT) a prompt runs. The knobs are a few seconds here; nothing is timed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { BrainClient } from "../client/client.js";
import { freePort } from "../core/free-port.js";
import { readTokens, tokensPath } from "../server/auth/tokens.js";
import { connectEditor, newSlowEchoSession, promptAnswer } from "../testing/acp-editor.js";
import { killed, serve } from "../testing/serve-process.js";

vi.setConfig({ testTimeout: 120_000 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");

it("ends a prompt whose daemon stopped mid-turn as unreachable, refuses the next at once, and runs one once it is back", async () => {
  const home = mkdtempSync(join(tmpdir(), "brain-acp-stopped-"));
  cleanups.push(async () => rmSync(home, { recursive: true, force: true }));
  const port = await freePort();
  const daemon = await serve(home, port);
  cleanups.push(async () => {
    daemon.kill("SIGCONT");
    await killed(daemon, "SIGTERM");
  });
  const url = `http://127.0.0.1:${port}`;
  const token = readTokens(tokensPath(home)).tokens[0]!.token;
  const editor = await connectEditor(["--server", url, "--token", token], {
    env: { BRAIN_ACP_DAEMON_WAIT: "2", BRAIN_SERVER_TIMEOUT: "2", BRAIN_ACP_STREAM_SILENCE: "2" },
  });
  cleanups.push(async () => {
    editor.child.kill("SIGTERM");
    await editor.exited;
  });
  const sessionId = await newSlowEchoSession(editor);
  const answer = promptAnswer(editor, sessionId, words);
  const chunks = () => editor.updates.filter((n) => n.sessionId === sessionId).length;
  await expect.poll(chunks, { timeout: 30_000 }).toBeGreaterThan(2);
  daemon.kill("SIGSTOP");

  const lost = await answer;
  expect(lost).toMatchObject({ code: -32603, data: { reason: "unreachable", url } });
  const { since } = (lost as { data: Record<string, string> }).data;
  expect((lost as { data: Record<string, string> }).data.message).toBe(
    `the daemon at ${url} has answered nothing since ${since} (it takes connections and does not answer, or they do not get through): is \`brain serve\` there hung (stopped, SIGSTOP)? Restart it (its sessions and their logs are kept), then send the request again`,
  );
  // Still stopped: the next prompt is refused in the same words (its /healthz probe got no answer).
  expect(await promptAnswer(editor, sessionId, "again")).toEqual(lost);

  // Running again: the first turn, left unseen, settles on its own; then a prompt runs to its end.
  daemon.kill("SIGCONT");
  const client = new BrainClient({ url, token });
  const settled = async () =>
    (await client.log(sessionId, 0, 1000)).events.filter((e) => e.type === "turn.settled").length;
  await expect.poll(settled, { timeout: 30_000 }).toBe(1);
  expect(await promptAnswer(editor, sessionId, "back")).toEqual({ answered: "end_turn" });
});

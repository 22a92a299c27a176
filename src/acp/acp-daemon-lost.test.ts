// `brain acp --server URL` when its daemon goes away mid-turn (kill -9): a real `brain serve` on a fixed port and
// home, killed and maybe started again. Back within $BRAIN_ACP_DAEMON_WAIT, the prompt goes on from the last event
// it gave (each word once); gone past it, the prompt ends naming the address and since when, and the next request
// fails at once with the same words until the daemon is back.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { freePort } from "../core/free-port.js";
import { readTokens, tokensPath } from "../server/auth/tokens.js";
import { connectEditor, newSlowEchoSession, promptAnswer, type TestEditor } from "../testing/acp-editor.js";
import { killed, serve } from "../testing/serve-process.js";

vi.setConfig({ testTimeout: 120_000 });

const words = Array.from({ length: 60 }, (_, i) => `w${i}`);
const homes: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) await killed(child, "SIGKILL");
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

async function daemonAndEditor(env: NodeJS.ProcessEnv) {
  const home = mkdtempSync(join(tmpdir(), "brain-acp-lost-"));
  homes.push(home);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  children.push(await serve(home, port));
  const token = readTokens(tokensPath(home)).tokens[0]!.token;
  const editor = await connectEditor(["--server", url, "--token", token], { env });
  children.push(editor.child);
  return { home, port, url, editor };
}

/** The reply's text the editor was sent, as words. */
const replyWords = (editor: TestEditor, sessionId: string) =>
  editor.updates
    .flatMap((n) =>
      n.sessionId === sessionId &&
      n.update.sessionUpdate === "agent_message_chunk" &&
      n.update.content.type === "text"
        ? [n.update.content.text]
        : [],
    )
    .join("")
    .split(/\s+/)
    .filter((w) => w !== "");

it("ends a prompt whose daemon stays gone past the wait, naming it and since when; the next request fails the same until it is back", async () => {
  const { home, port, url, editor } = await daemonAndEditor({ BRAIN_ACP_DAEMON_WAIT: "2" });
  const sessionId = await newSlowEchoSession(editor);
  const answer = promptAnswer(editor, sessionId, words.join(" "));
  await expect.poll(() => replyWords(editor, sessionId).length).toBeGreaterThan(4);
  await killed(children[0]!, "SIGKILL");
  const lost = await answer;
  expect(lost).toMatchObject({ code: -32603, data: { reason: "unreachable", url } });
  const { since, message } = (lost as { data: Record<string, string> }).data;
  expect(message).toBe(
    `the daemon at ${url} is unreachable since ${since}: is \`brain serve\` running there? Start it again (its sessions and their logs are kept), then send the request again`,
  );
  // At once, and in the same words (the same since).
  expect(await promptAnswer(editor, sessionId, "again")).toEqual(lost);
  children.push(await serve(home, port));
  expect(await promptAnswer(editor, sessionId, "back")).toEqual({ answered: "end_turn" });
});

it("goes on with a prompt whose daemon is back within the wait, each word of the reply once", async () => {
  const { home, port, editor } = await daemonAndEditor({});
  const sessionId = await newSlowEchoSession(editor);
  const answer = promptAnswer(editor, sessionId, words.join(" "));
  await expect.poll(() => replyWords(editor, sessionId).length).toBeGreaterThan(4);
  await killed(children[0]!, "SIGKILL");
  children.push(await serve(home, port));
  const answered = await answer;
  expect(answered).not.toMatchObject({ data: { reason: "unreachable" } });
  const got = replyWords(editor, sessionId);
  // Echo's reply is "echo #1: " and the prompt: each word in order, none given twice after the reconnect.
  const reply = ["echo", "#1:", ...words];
  expect(got).toEqual(reply.slice(0, got.length));
  // The daemon is reached again: the next prompt runs.
  expect(await promptAnswer(editor, sessionId, "next")).toEqual({ answered: "end_turn" });
});

it("refuses a $BRAIN_ACP_DAEMON_WAIT that is not a whole number of seconds, naming it and what it takes", async () => {
  const bin = join(import.meta.dirname, "../../bin/brain.js");
  const child = spawn(process.execPath, [bin, "acp", "--server", "http://127.0.0.1:9", "--token", "t"], {
    env: { ...process.env, BRAIN_URL: "", BRAIN_TOKEN: "", BRAIN_ACP_DAEMON_WAIT: "1m" },
    stdio: ["pipe", "ignore", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stdin!.end();
  expect(await exited).toBe(2);
  expect(stderr).toContain(
    '$BRAIN_ACP_DAEMON_WAIT is the seconds a prompt waits for a daemon it lost to answer again (a whole number, at least 1; default 60), not "1m"',
  );
});

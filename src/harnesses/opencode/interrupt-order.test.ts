// An interrupt while opencode waits on Brain (a question to the session's clients here; a bound tool's MCP call
// alike): Brain's answer to what waits (the question dismissed, the call cancelled) reaches opencode on a channel
// apart from its abort, and opencode gives an answer that comes first to the model: a request after the
// interrupt (the conformance kit's "clean interruption" saw one). So the abort goes first and the answer only
// once opencode has answered the abort.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { events, waitForEvent } from "../../testing/brain.js";
import { SERVE_HEAD, SERVE_TAIL, useHeldOpencode } from "./testing/stand-in.js";

/**
 * `opencode serve` that asks a question at the prompt. It notes in `order` the abort, its answer to the abort and
 * the question's dismissal as they come. The abort is answered once the dismissal came, or after 2 s: a real
 * opencode answers at once, but this one leaves a dismissal sent with the interrupt the time to come first. The
 * turn ends (aborted) once both came.
 */
const SERVE = `${SERVE_HEAD}
const order = (what) => fs.appendFileSync(dir + "/order", what + "\\n");
let dismissed;
const dismissal = new Promise((resolve) => (dismissed = resolve));
function prompt(req, res) {
  res.writeHead(204).end();
  message("msg_1");
  const questions = [{ question: "Which one?", header: "Pick", options: [{ label: "a" }, { label: "b" }] }];
  send("question.asked", { id: "que_1", sessionID: "ses_1", questions });
}
function other(req, res) {
  if (req.url !== "/question/que_1/reject") return false;
  order("question dismissed");
  res.end("true");
  dismissed();
  return true;
}
async function abort(res) {
  order("abort");
  await Promise.race([dismissal, new Promise((resolve) => setTimeout(resolve, 2000))]);
  order("abort answered");
  res.end("true");
  await dismissal;
  send("session.error", { sessionID: "ses_1", error: { name: "MessageAbortedError", data: { message: "Aborted" } } });
  send("session.idle", { sessionID: "ses_1" });
}
${SERVE_TAIL}`;

const heldOpencode = useHeldOpencode();

describe("an interrupt while opencode waits on a question to Brain's clients", () => {
  it("dismisses the question only once opencode has answered its abort", async () => {
    const { dir, session } = await heldOpencode("brain-opencode-order-", SERVE);
    const turn = await session.prompt("ask me");
    await waitForEvent(session, (e) => e.type === "question.requested");
    await session.interrupt();
    expect((await turn.settled).status).toBe("interrupted");
    expect(readFileSync(join(dir, "order"), "utf8").trim().split("\n")).toEqual([
      "abort",
      "abort answered",
      "question dismissed",
    ]);
    const asked = (await events(session)).filter((e) => e.type.startsWith("question."));
    expect(asked.map((e) => e.type)).toEqual(["question.requested", "question.answered"]);
  }, 120_000);
});

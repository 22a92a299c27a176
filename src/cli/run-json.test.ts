// `brain run --json` on a new session prints its whole log: session.opened is logged as the session is made,
// before the run listens, and was missing (the output started at seq 2).
import { expect, it } from "vitest";
import { useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("run-json");

const eventsOf = (out: string) =>
  out
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { seq: number; type: string; session: string });

it("prints a new session's every event once, from seq 1, in order", () => {
  const { code, out } = cli.run(["run", "--json", "hello"]);
  expect(code).toBe(0);
  const events = eventsOf(out);
  expect(events[0]).toMatchObject({ seq: 1, type: "session.opened" });
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.at(-1)).toMatchObject({ type: "turn.settled" });
});

it("prints, of a session it continues, what this run logged, from its prompt on", () => {
  const first = eventsOf(cli.run(["run", "--json", "first"]).out);
  const id = first[0]!.session;
  const next = eventsOf(cli.run(["run", "--session", id, "--json", "second"]).out);
  // The first run's session.closed came after its output ended (it closes the session as it exits).
  expect(next[0]).toMatchObject({ seq: first.at(-1)!.seq + 2, type: "user.prompt" });
  expect(next.map((e) => e.seq)).toEqual(next.map((_, i) => next[0]!.seq + i));
  expect(next.at(-1)).toMatchObject({ type: "turn.settled" });
});

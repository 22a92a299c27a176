// `brain sessions rm ID [--force]`: a real process on a throwaway $BRAIN_HOME. A session others were forked or
// handed off from is refused, naming them, unless forced.
import { describe, expect, it } from "vitest";
import { useBrainCli } from "../testing/brain-cli.js";

const cli = useBrainCli("cli-rm");
const brain = (args: string[]) => cli.run(args);

/** The id of the session a command made: `run` names it on stderr, fork and handoff print it on stdout. */
function made(result: { code: number | null; out: string; err: string }, printed = true): string {
  expect(result.code, result.err).toBe(0);
  const id = printed ? result.out.trim() : /session (\S+)\n/.exec(result.err)?.[1];
  if (!id) throw new Error(`no session id in: ${result.err}`);
  return id;
}

const listed = () => brain(["sessions", "ls"]).out;

describe("brain sessions rm", () => {
  it("refuses a session forked and handed off from, naming them; deletes it once they are gone or with --force", () => {
    const id = made(brain(["run", "remember the parrot"]), false);
    expect(brain(["checkpoint", id]).code).toBe(0);
    const fork = made(brain(["fork", id]));
    const handoff = made(brain(["handoff", id, "--to", "echo"]));

    const refused = brain(["sessions", "rm", id]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("2 sessions were forked or handed off from it");
    expect(refused.err).toContain(fork);
    expect(refused.err).toContain(handoff);
    expect(refused.err).toContain(`\`brain sessions rm ${id} --force\``);
    expect(listed()).toContain(id);

    expect(brain(["sessions", "rm", fork]).code).toBe(0);
    const still = brain(["sessions", "rm", id]);
    expect(still.code).toBe(1);
    expect(still.err).toContain(
      `1 session was forked or handed off from it and read their history from its log (${handoff})`,
    );

    const forced = brain(["sessions", "rm", id, "--force"]);
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toContain(
      `${id}: deleted; the 1 session(s) forked or handed off from it lost the history`,
    );
    expect(listed()).not.toContain(id);
    expect(listed()).toContain(handoff);
    // Nothing depends on the handoff: deleted at once.
    expect(brain(["sessions", "rm", handoff]).code).toBe(0);
    expect(listed()).not.toContain(handoff);
  });
});

import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PermissionPolicy } from "../protocol/permissions.js";
import { DEFAULT_ASK_TIMEOUT_MS, globMatches, PermissionRules } from "./permissions.js";

const DECISIONS = ["allow", "ask", "deny"] as const;

describe("a session's permission rules", () => {
  it("lets the first matching glob decide, then the default, then the caller's unlisted", () => {
    const rules = new PermissionRules({ tools: { "fs__write_*": "ask", "fs__*": "deny", "sh?ll": "allow" } });
    expect(rules.decide("fs__write_file")).toBe("ask");
    expect(rules.decide("fs__read")).toBe("deny");
    expect(rules.decide("shell")).toBe("allow");
    expect(rules.decide("other")).toBe("allow");
    expect(rules.decide("other", "ask")).toBe("ask");
    expect(new PermissionRules({ default: "deny" }).decide("other", "ask")).toBe("deny");
  });

  it("gives each tool the stricter verdict of the operator's policy and a client's", () => {
    const operator = { default: "ask", tools: { echo: "deny", "read_*": "allow" } } as const;
    const client = { default: "allow", tools: { read_secret: "deny", "*": "allow" } } as const;
    const rules = new PermissionRules(operator, client);
    expect(rules.decide("echo")).toBe("deny");
    expect(rules.decide("read_file")).toBe("allow");
    expect(rules.decide("read_secret")).toBe("deny");
    expect(rules.decide("write")).toBe("ask");
  });

  it("is never looser than either policy alone, for any tool, glob, default and unlisted", () => {
    const policies: PermissionPolicy[] = [{}];
    for (const d of DECISIONS) {
      policies.push({ default: d }, { tools: { "e*": d } }, { tools: { echo: d, "*": "allow" } });
      for (const e of DECISIONS) policies.push({ default: d, tools: { "?cho": e } });
    }
    const strictness = (d: string) => DECISIONS.indexOf(d as (typeof DECISIONS)[number]);
    for (const operator of policies) {
      for (const client of policies) {
        const both = new PermissionRules(operator, client);
        for (const tool of ["echo", "ech", "xcho", "other"]) {
          for (const unlisted of DECISIONS) {
            const alone = [operator, client].map((p) => new PermissionRules(p).decide(tool, unlisted));
            expect(strictness(both.decide(tool, unlisted))).toBe(Math.max(...alone.map(strictness)));
          }
        }
      }
    }
  });

  it("matches globs as a regular expression of them would, for every short glob and name", () => {
    const alphabet = ["a", "b", "*", "?"];
    const globs = [""];
    for (let length = 1; length <= 4; length++) {
      for (const glob of globs.filter((g) => g.length === length - 1))
        globs.push(...alphabet.map((c) => glob + c));
    }
    const names = [""];
    for (let length = 1; length <= 5; length++) {
      for (const name of names.filter((n) => n.length === length - 1)) names.push(`${name}a`, `${name}b`);
    }
    for (const glob of globs) {
      const regex = new RegExp(`^${glob.replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
      for (const name of names) expect(globMatches(glob, name), `${glob} ~ ${name}`).toBe(regex.test(name));
    }
  });

  it("waits the shorter of the two ask timeouts, the operator's default if it sets none", () => {
    expect(new PermissionRules().askTimeoutMs).toBe(DEFAULT_ASK_TIMEOUT_MS);
    expect(new PermissionRules({}, { ask_timeout_ms: 5 }).askTimeoutMs).toBe(5);
    expect(new PermissionRules({}, { ask_timeout_ms: 3_600_000 }).askTimeoutMs).toBe(DEFAULT_ASK_TIMEOUT_MS);
    expect(new PermissionRules({ ask_timeout_ms: 3_600_000 }, {}).askTimeoutMs).toBe(3_600_000);
    expect(new PermissionRules({ ask_timeout_ms: 10 }, { ask_timeout_ms: 0 }).askTimeoutMs).toBe(0);
  });

  it("refuses an ask timeout longer than a timer can wait", () => {
    expect(PermissionPolicy.safeParse({ ask_timeout_ms: 2_147_483_647 }).success).toBe(true);
    const over = PermissionPolicy.safeParse({ ask_timeout_ms: 2 ** 31 });
    expect(over.success).toBe(false);
    expect(over.error?.issues[0]).toMatchObject({
      path: ["ask_timeout_ms"],
      message: expect.stringContaining("at most 2147483647 ms"),
    });
  });

  it("matches `*` and `?` against any characters, a line break too, and everything else as itself", () => {
    const cases: [string, string, boolean][] = [
      ["*", "", true],
      ["?", "", false],
      ["a*b", "ab", true],
      ["a*b", "a\nb", true],
      ["Bash*", "Bash\nrm -rf /", true],
      ["sh?ll", "sh\nll", true],
      ["*.txt", "a.txt", true],
      ["*.txt", "a_txt", false],
      ["a*b*c", "abbbcbc", true],
      ["a*b*c", "abbbcb", false],
      ["fs__(read)|[x]+", "fs__(read)|[x]+", true],
      ["fs__(read)|[x]+", "fs__read", false],
      ["**?", "x", true],
    ];
    for (const [glob, name, matches] of cases)
      expect([glob, name, globMatches(glob, name)]).toEqual([glob, name, matches]);
    // A deny rule names a tool whatever its name holds: a line break does not slip past it to the default.
    expect(new PermissionRules({ tools: { "Bash*": "deny" } }).decide("Bash\nx")).toBe("deny");
  });

  it("decides at once on a client's glob of many wildcards that no name matches", async () => {
    // In a child, so that matching that backtracks through every split of the name fails here instead of holding
    // the test run: as a RegExp this glob takes longer than any deadline against a 51-character name.
    const glob = `${"*?".repeat(14)}!`;
    const script = `
      const { PermissionRules } = await import(${JSON.stringify(join(import.meta.dirname, "../../dist/src/core/permissions.js"))});
      const rules = new PermissionRules({ default: "allow" }, { tools: { ${JSON.stringify(glob)}: "deny" } });
      process.stdout.write([rules.decide("brain-unlisted-" + "0".repeat(36)), rules.decide("x".repeat(14) + "!")].join(" "));
    `;
    const run = promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      timeout: 20_000,
    });
    await expect(run).resolves.toMatchObject({ stdout: "allow deny" });
  });
});

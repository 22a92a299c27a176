// Every command in main's table, and every verb of those that have verbs, answers --help (and -h) with its
// usage on stdout and exit 0, without doing anything else.
import { afterEach, describe, expect, it, vi } from "vitest";
import { COMMANDS, main } from "./main.js";

async function capture(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
  const code = await main(argv);
  vi.restoreAllMocks();
  return { code, out: out.join(""), err: err.join("") };
}

afterEach(() => vi.restoreAllMocks());

const cases = await Promise.all(
  Object.entries(COMMANDS).map(async ([name, load]) => {
    const module = await load();
    return [
      { argv: [name, "--help"], usage: module.usage },
      { argv: [name, "-h"], usage: module.usage },
      ...(module.verbs ?? []).map((verb) => ({ argv: [name, verb, "--help"], usage: module.usage })),
    ];
  }),
);

describe("brain <command> --help", () => {
  it.each(cases.flat().map((c) => [c.argv.join(" "), c] as const))(
    "%s prints its usage and exits 0",
    async (_, c) => {
      const { code, out, err } = await capture(c.argv);
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(out).toContain(`usage: brain ${c.usage}`);
    },
  );

  it("covers the nested verbs", () => {
    const argvs = cases.flat().map((c) => c.argv.join(" "));
    for (const nested of ["sessions ls --help", "token add --help", "ext install --help", "agents ls --help"])
      expect(argvs).toContain(nested);
  });

  it("leaves words after -- to the program they belong to", async () => {
    const { code, out, err } = await capture(["fork", "--", "--help"]);
    expect(code).not.toBe(0);
    expect(out).not.toContain("usage:");
    expect(err).toContain("brain:");
  });
});

// Gemini lists its skills in the order its glob found their files: the fidelity check compares them in one order.
import { describe, expect, it } from "vitest";
import { sortedSkills } from "./profiles.js";

const prompt = (...names: string[]) =>
  JSON.stringify({
    system: `intro\n<available_skills>\n${names.map((n) => `  <skill>\n    <name>${n}</name>\n  </skill>\n`).join("")}</available_skills>\nafter`,
  });

describe("sortedSkills", () => {
  it("puts the skills of a request in one order, whatever order they were listed in", () => {
    const [a, b] = [
      prompt("skill-creator", "antigravity-support"),
      prompt("antigravity-support", "skill-creator"),
    ];
    expect(a).not.toBe(b);
    expect(sortedSkills(a)).toBe(sortedSkills(b));
    expect(JSON.parse(sortedSkills(a)).system).toContain("<name>antigravity-support</name>");
  });

  it("leaves every other difference in place", () => {
    expect(sortedSkills(prompt("a", "b"))).not.toBe(sortedSkills(prompt("a", "c")));
    const text = JSON.stringify({ system: "no skills here" });
    expect(sortedSkills(text)).toBe(text);
  });
});

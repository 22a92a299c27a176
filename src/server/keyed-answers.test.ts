// KeyedAnswers, the node's memory of keyed takes of control, rebuilds and restores: a retry gets the first answer
// (sharing the run while it runs), a failed run is forgotten, another body is a 422, and only the newest are kept.
import { describe, expect, it } from "vitest";
import { ApiError } from "./errors.js";
import { KeyedAnswers } from "./keyed-answers.js";

const slot = (key: string | undefined, tenant = "default") => ({
  tenant,
  session: "s",
  route: "rebuild",
  key,
});

describe("KeyedAnswers", () => {
  it("runs once per key, and a retry while the first runs shares its run", async () => {
    const answers = new KeyedAnswers();
    let runs = 0;
    let finish!: (value: string) => void;
    const run = () => {
      runs++;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    };
    const first = answers.once(slot("k"), "", run);
    const retry = answers.once(slot("k"), "", run);
    finish("aside-1");
    expect(await Promise.all([first, retry])).toEqual(["aside-1", "aside-1"]);
    expect(await answers.once(slot("k"), "", run)).toBe("aside-1");
    expect(runs).toBe(1);
    // Another tenant's key, or none, is another request.
    void answers.once(slot("k", "acme"), "", run);
    void answers.once(slot(undefined), "", run);
    expect(runs).toBe(3);
  });

  it("forgets a run that failed, so that its retry runs again", async () => {
    const answers = new KeyedAnswers();
    await expect(answers.once(slot("k"), "", () => Promise.reject(new Error("busy")))).rejects.toThrow(
      "busy",
    );
    expect(await answers.once(slot("k"), "", () => Promise.resolve("done"))).toBe("done");
    expect(() =>
      answers.once(slot("sync"), "", () => {
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(answers.once(slot("sync"), "", () => "taken")).toBe("taken");
  });

  it("refuses the key with another body, and keeps only the newest", async () => {
    const answers = new KeyedAnswers(2);
    answers.once(slot("a"), "body-1", () => 1);
    const other = (() => {
      try {
        return answers.once(slot("a"), "body-2", () => 2);
      } catch (err) {
        return err;
      }
    })();
    expect(other).toBeInstanceOf(ApiError);
    expect(other).toMatchObject({ code: "idempotency_key_reused", status: 422 });
    expect((other as ApiError).message).toContain('Idempotency-Key "a" was already used');
    expect((other as ApiError).message).toContain("had another body");
    answers.once(slot("b"), "", () => 2);
    answers.once(slot("c"), "", () => 3);
    // "a" was the oldest of three: forgotten, its retry runs again.
    expect(answers.once(slot("a"), "body-2", () => 4)).toBe(4);
    expect(answers.once(slot("c"), "", () => 5)).toBe(3);
  });

  it("keeps each tenant's newest: another tenant's many keys do not push out its answers", () => {
    const answers = new KeyedAnswers(2);
    answers.once(slot("mine", "acme"), "", () => "aside-1");
    // A valid token of another tenant sends more keyed takes than the node keeps.
    for (const key of ["x", "y", "z"]) answers.once(slot(key, "other"), "", () => key);
    expect(answers.once(slot("mine", "acme"), "", () => "aside-2")).toBe("aside-1");
    // Its own keys still push out its oldest.
    expect(answers.once(slot("x", "other"), "", () => "again")).toBe("again");
  });

  it("never forgets a run still running, however many keys come after it", async () => {
    const answers = new KeyedAnswers(2);
    let runs = 0;
    let finish!: (value: string) => void;
    const slow = () => {
      runs++;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    };
    const first = answers.once(slot("slow"), "", slow);
    for (const key of ["b", "c", "d"]) answers.once(slot(key), "", () => key);
    // The retry of the running first request shares its run instead of starting a second one beside it.
    const retry = answers.once(slot("slow"), "", slow);
    expect(runs).toBe(1);
    finish("aside-1");
    expect(await Promise.all([first, retry])).toEqual(["aside-1", "aside-1"]);
    expect(runs).toBe(1);
    // Settled, it is the oldest again and the next key pushes it out.
    answers.once(slot("e"), "", () => "e");
    expect(await answers.once(slot("slow"), "", () => Promise.resolve("again"))).toBe("again");
  });
});

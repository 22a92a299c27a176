// The controller lease on a clock the test moves: claimed by the first driving client, kept while its stream
// is open or it keeps driving, lapsing LEASE_MS after both stop, taken over outright by POST .../control.
import { describe, expect, it } from "vitest";
import { ControlLeases, LEASE_MS } from "./control.js";

function leases() {
  let now = 0;
  const l = new ControlLeases(() => now);
  return { l, advance: (ms: number) => (now += ms) };
}

describe("ControlLeases", () => {
  it("gives control to the first client that drives, and refuses the others until it lapses", () => {
    const { l, advance } = leases();
    l.drive("s", "a");
    expect(l.holder("s")).toBe("a");
    expect(() => l.drive("s", "b")).toThrow('controlled by client "a"');
    expect(() => l.drive("s", undefined)).toThrow("controlled");
    advance(LEASE_MS - 1);
    l.drive("s", "a"); // driving renews it
    advance(LEASE_MS - 1);
    expect(l.holder("s")).toBe("a");
    advance(2);
    expect(l.holder("s")).toBeUndefined();
    l.drive("s", "b");
    expect(l.holder("s")).toBe("b");
  });

  it("says what body takes control: the X-Brain-Client header alone is not it", () => {
    const { l } = leases();
    l.drive("s", "a");
    expect(() => l.drive("s", "b")).toThrow('POST /v1/sessions/s/control with {"client": "b"}');
    expect(() => l.drive("s", undefined)).toThrow(
      'POST /v1/sessions/s/control with {"client": "ID"}, then send X-Brain-Client: ID',
    );
  });

  it("keeps the lease while the controller has a stream open, and lets it lapse after the stream closes", () => {
    const { l, advance } = leases();
    const closeStream = l.streamOpened("s", "a");
    l.drive("s", "a");
    advance(LEASE_MS * 10);
    expect(l.holder("s")).toBe("a");
    closeStream();
    advance(LEASE_MS + 1);
    expect(l.holder("s")).toBeUndefined();
  });

  it("lets anyone drive an uncontrolled session without claiming it when they give no client id", () => {
    const { l } = leases();
    l.drive("s", undefined);
    expect(l.holder("s")).toBeUndefined();
  });

  it("hands control over on take(), naming the previous controller", () => {
    const { l } = leases();
    l.drive("s", "a");
    expect(l.take("s", "b")).toBe("a");
    expect(l.holder("s")).toBe("b");
    expect(l.take("s", "b")).toBeUndefined();
    l.release("s");
    expect(l.holder("s")).toBeUndefined();
  });

  describe("driving(): a claim is kept only if its command is taken", () => {
    /** A command that is taken or refused when the test says. */
    function held() {
      let answer!: (taken: boolean) => void;
      const done = new Promise<boolean>((resolve) => (answer = resolve));
      const command = async () => {
        if (!(await done)) throw new Error("refused");
      };
      return { command, take: () => answer(true), refuse: () => answer(false) };
    }

    it("undoes the claim of a refused command, and refuses others only while it is in flight", async () => {
      const { l } = leases();
      const a = held();
      const running = l.driving("s", "a", a.command).catch(() => "refused");
      expect(l.holder("s")).toBe("a");
      await expect(l.driving("s", "b", async () => {})).rejects.toThrow('controlled by client "a"');
      a.refuse();
      expect(await running).toBe("refused");
      expect(l.holder("s")).toBeUndefined();
      await l.driving("s", "b", async () => {});
      expect(l.holder("s")).toBe("b");
    });

    it("keeps the claim when another command of the same client is taken, whichever settles first", async () => {
      for (const order of ["taken first", "refused first"]) {
        const { l } = leases();
        const [first, second] = [held(), held()];
        const runs = [first, second].map((c) => l.driving("s", "a", c.command).catch(() => {}));
        if (order === "taken first") second.take();
        first.refuse();
        second.take();
        await Promise.all(runs);
        expect(l.holder("s"), order).toBe("a");
      }
    });

    it("leaves a refused command's holder in control, and a take made meanwhile", async () => {
      const { l } = leases();
      l.take("s", "a");
      const own = held();
      const refused = l.driving("s", "a", own.command);
      own.refuse();
      await expect(refused).rejects.toThrow("refused");
      expect(l.holder("s")).toBe("a");
      const b = held();
      l.release("s");
      const running = l.driving("s", "b", b.command).catch(() => {});
      l.take("s", "c");
      b.refuse();
      await running;
      expect(l.holder("s")).toBe("c");
    });
  });
});

// Several buffers written as one (a message from its text blocks): short writes go on where they stopped.
import { constants } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { after, type LogIO, nodeLogIO, writeDurably, writeFlags } from "./log-io.js";

describe("writeDurably of several buffers", () => {
  it("knows what is left after any number of bytes", () => {
    const bufs = [Buffer.from("abc"), Buffer.alloc(0), Buffer.from("de"), Buffer.from("fgh")];
    const whole = "abcdefgh";
    for (let n = 0; n <= whole.length; n++) {
      expect(Buffer.concat(after(bufs, n)).toString()).toBe(whole.slice(n));
    }
  });

  it("writes them all in order, in one call, and carries on after short writes", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "brain-log-io-"));
    try {
      const bufs = Array.from({ length: 7 }, (_, i) => Buffer.alloc(1000 + 300 * i, 97 + i));
      const calls: number[] = [];
      // At most 1 234 bytes a call: every call but the last is short, most end inside a buffer.
      const io: LogIO = {
        ...nodeLogIO,
        writev: (fd, buffers, position) => {
          calls.push(buffers.length);
          let room = 1234;
          const head = buffers.map((b) => {
            const part = b.subarray(0, Math.max(0, room));
            room -= part.length;
            return part;
          });
          return nodeLogIO.writev!(fd, head, position);
        },
      };
      const file = path.join(dir, "f");
      await fs.writeFile(file, "head:");
      const fd = await io.open(file, writeFlags(io, constants.O_RDWR), 0o600);
      await writeDurably(io, fd, bufs, 5);
      await io.close(fd);
      expect(await fs.readFile(file)).toEqual(Buffer.concat([Buffer.from("head:"), ...bufs]));
      expect(calls.length).toBe(Math.ceil(bufs.reduce((n, b) => n + b.length, 0) / 1234));
      expect(calls[0]).toBe(7);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

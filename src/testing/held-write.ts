// A log whose write of a chosen event waits until the test lets it go: for what happens between a harness ending
// its turn and the turn's turn.settled being durable.
import { type LogIO, nodeLogIO } from "../store/fs/index.js";

export interface HeldWrite {
  /** The log's file calls, holding the first write that holds `"type":"<type>"`. */
  io: LogIO;
  /** Resolves once that write is being held. */
  held: Promise<void>;
  /** Lets it (and every later one) go. */
  release(): void;
}

export function holdWriteOf(type: string): HeldWrite {
  let holding = () => {};
  const held = new Promise<void>((resolve) => {
    holding = resolve;
  });
  let released = false;
  let release = () => {
    released = true;
  };
  const io: LogIO = {
    ...nodeLogIO,
    async write(fd, buffer, offset, length, position) {
      if (!released && buffer.toString("utf8", offset, offset + length).includes(`"type":"${type}"`)) {
        holding();
        await new Promise<void>((resolve) => {
          release = () => {
            released = true;
            resolve();
          };
        });
      }
      return nodeLogIO.write(fd, buffer, offset, length, position);
    },
  };
  return { io, held, release: () => release() };
}

// 4. Checkpoint: CheckpointStore.create for a 100 MiB append-only native file that already has a checkpoint,
// after 1 KiB was appended (an incremental checkpoint: head/tail window hashes, a 1 KiB blob, a manifest).
// Absolute target. Baseline for context: the same 1 KiB copied raw into a new file + fsync, then a small
// manifest written to a temp file + fsync + rename + fsync of its directory.
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { CheckpointStore } from "../src/core/checkpoints/index.js";
import { makeTemp, removeTemp } from "./lib/cleanup.js";
import { startProbe } from "./lib/load.js";
import { type BenchRow, interleave, log, type Sample, timed, timeRow } from "./lib/measure.js";
import type { BenchOptions } from "./options.js";

const MiB = 1 << 20;
const FILE_MIB = 100;
const APPEND = 1024;
const NATIVE = "transcript.jsonl";
const SECRET = "sk-bench-not-a-real-key-0123456789";

function fsyncPath(p: string): void {
  const fd = openSync(p, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export async function checkpointBench(opts: BenchOptions): Promise<BenchRow[]> {
  const reps = opts.quick ? 10 : 20;
  const dir = await makeTemp("checkpoint");
  try {
    const nativeDir = path.join(dir, "native");
    const file = path.join(nativeDir, NATIVE);
    mkdirSync(nativeDir);
    log(`checkpoint: writing a ${FILE_MIB} MiB append-only file, first checkpoint, then ${reps} rounds`);
    const chunk = randomBytes(MiB);
    const fd = openSync(file, "w");
    for (let i = 0; i < FILE_MIB; i++) {
      chunk.writeUInt32LE(i, 0); // every MiB differs a little
      for (let done = 0; done < MiB; ) done += writeSync(fd, chunk, done, MiB - done);
    }
    fsyncSync(fd);
    closeSync(fd);

    const store = new CheckpointStore(path.join(dir, "checkpoints"));
    const declared = () => [{ path: NATIVE, size: statSync(file).size, append_only: true }];
    const first = await timed(() =>
      store.create(nativeDir, declared(), { secrets: [{ name: "BENCH_KEY", value: SECRET }] }),
    );
    log(`  first checkpoint of ${FILE_MIB} MiB: ${(first.seconds * 1000).toFixed(0)} ms`);

    const rawDir = path.join(dir, "raw");
    mkdirSync(rawDir);
    const subject = async (): Promise<Sample> => {
      appendFileSync(file, randomBytes(APPEND / 2).toString("hex")); // 1 KiB, not timed
      const files = declared();
      const { seconds, foreign, result } = await timed(() =>
        store.create(nativeDir, files, { secrets: [{ name: "BENCH_KEY", value: SECRET }] }),
      );
      const last = result.files[0]?.segments.at(-1);
      if (last?.length !== APPEND)
        throw new Error(`checkpoint stored ${last?.length} new bytes, expected ${APPEND}`);
      return { value: seconds * 1000, foreign };
    };
    let rawId = 0;
    const baseline = async (): Promise<Sample> => {
      const id = String(++rawId).padStart(6, "0");
      const { seconds, foreign } = await timed(async () => {
        const size = statSync(file).size;
        const buf = Buffer.allocUnsafe(APPEND);
        const src = openSync(file, "r");
        readSync(src, buf, 0, APPEND, size - APPEND);
        closeSync(src);
        const blob = openSync(path.join(rawDir, `blob-${id}`), "wx");
        writeSync(blob, buf);
        fsyncSync(blob);
        closeSync(blob);
        const manifest = JSON.stringify({ id, files: [{ path: NATIVE, size, blob: `blob-${id}` }] });
        const tmp = path.join(rawDir, `${id}.json.tmp`);
        const m = openSync(tmp, "wx");
        writeSync(m, manifest);
        fsyncSync(m);
        closeSync(m);
        renameSync(tmp, path.join(rawDir, `${id}.json`));
        fsyncPath(rawDir);
      });
      return { value: seconds * 1000, foreign };
    };

    // Each create takes milliseconds, too short for /proc's 10 ms ticks: take the load over all rounds.
    const probe = startProbe();
    const samples = await interleave("checkpoint", reps, { baseline, subject });
    const foreign = probe.stop();
    for (const sample of [...samples.baseline, ...samples.subject]) sample.foreign = foreign;
    return [
      timeRow(
        {
          id: "checkpoint",
          what: `checkpoint create, +1 KiB on a ${FILE_MIB} MiB append-only file`,
          unit: "ms",
          baselineWhat: "raw 1 KiB copy + fsync, manifest tmp + fsync + rename + dir fsync",
          notes: [
            `${reps} checkpoints; target applies to p99 (nearest rank: with ${reps} runs, the slowest)`,
            `first checkpoint (all ${FILE_MIB} MiB): ${(first.seconds * 1000).toFixed(0)} ms`,
          ],
        },
        samples,
        { kind: "max", value: 10, of: "p99" },
      ),
    ];
  } finally {
    await removeTemp(dir);
  }
}

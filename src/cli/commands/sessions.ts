// `brain sessions ls | show ID | events ID`: reads the store without starting any harness.
import { once } from "node:events";
import { dependedOn, dependentsOf } from "../../core/dependents.js";
import { SessionError } from "../../core/errors.js";
import type { Redactor } from "../../core/redact.js";
import type { SegmentPolicy } from "../../core/retention.js";
import type { UnreadableSession } from "../../core/store.js";
import { compactLog } from "../../store/fs/compact.js";
import { FsSessionStore, readEventsFile } from "../../store/fs/index.js";
import { liveHolder } from "../../store/fs/log-lock.js";
import { retireSegments } from "../../store/fs/retire.js";
import { parse, refuseExtra, str, UsageError, wholeNumber, withBrain } from "../args.js";
import { brainHome } from "../setup.js";
import { onStdoutClosed } from "../stdout-closed.js";
import { deleteThroughDaemon, throughDaemon } from "../through-daemon.js";
import { DEFAULT_TAIL, shownRedactor, showSession, showWindow } from "./session-show.js";

export const usage = `sessions ls | show ID [--tail N] [--after SEQ] | events ID [--after SEQ] [--json] | compact ID | rebuild ID | rm ID [--force]
                              the sessions in $BRAIN_HOME (default ~/.brain) and their logs; ls shows each one
                              open, closed or idle (its record open, but no live process holds it: the one
                              that had it was killed or stopped, and the next run on it reopens it; --json
                              prints the record as stored); show prints a session's record, last seq, pending
                              requests, checkpoints, the bytes its native state takes (native_disk) and its
                              last ${DEFAULT_TAIL} events (--tail N: the last N; --after SEQ: the first N after SEQ);
                              compact drops the deltas of completed turns
                              (their messages hold the text) from a closed log, and with --archive-segments
                              (gzip'd to the session's archive/) or --drop-segments its sealed segments, all or
                              (--max-log-mb N) the oldest past N MB;
                              rebuild rewrites a session's native state from its log (a harness that lost it);
                              rm deletes a session and its files, refused while sessions forked or handed off
                              from it read their history from its log (--force: deleted anyway, and they lose it)`;

export const verbs = ["ls", "show", "events", "compact", "rebuild", "rm"] as const;

export async function command(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    after: { type: "string" },
    tail: { type: "string" },
    json: { type: "boolean" },
    "archive-segments": { type: "boolean" },
    "drop-segments": { type: "boolean" },
    "max-log-mb": { type: "string" },
    force: { type: "boolean" },
  });
  const [verb = "ls", id] = positionals;
  // An unknown verb is refused below, naming the known ones.
  if (verb === "ls") refuseExtra(positionals, 1, "sessions ls takes no session ID");
  else if ((verbs as readonly string[]).includes(verb))
    refuseExtra(positionals, 2, `sessions ${verb} takes one session ID`);
  const flags = { tail: str(values.tail), after: str(values.after) };
  if (flags.tail !== undefined && verb !== "show")
    throw new UsageError(`--tail is for \`sessions show\`, not \`sessions ${verb}\``);
  // Checked before the store is touched: a bad value is refused as a usage error, whatever the session.
  const window = verb === "show" ? showWindow(flags) : undefined;
  const after =
    flags.after === undefined ? 0 : wholeNumber("--after", flags.after, "the seq to print events after");
  const store = new FsSessionStore(brainHome());
  return withBrain(values, async (brain) => {
    switch (verb) {
      case "ls": {
        const damaged: UnreadableSession[] = [];
        const records = await brain.list((session) => damaged.push(session));
        for (const r of records) {
          if (!values.json) {
            const state = await shownState(r, store);
            process.stdout.write(`${r.id}  ${r.harness.padEnd(12)} ${state.padEnd(6)} ${r.created_at}\n`);
            continue;
          }
          // The whole record, read one at a time (the list holds summaries); one deleted since is left out.
          const record = await brain.record(r.id).catch(() => undefined);
          if (record) process.stdout.write(`${JSON.stringify(brain.shownRecord(record))}\n`);
        }
        // Named, as GET /v1/sessions does: left out without a word, one would take it for deleted.
        for (const d of damaged)
          process.stderr.write(`brain: session ${d.id} cannot be listed: ${d.error}\n`);
        if (records.length === 0 && damaged.length === 0 && !values.json)
          process.stderr.write('no sessions yet: try `brain run "hello"`\n');
        return 0;
      }
      case "show": {
        const shown = await showSession(brain, store, required(id), window ?? { tail: DEFAULT_TAIL });
        process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
        return 0;
      }
      case "events": {
        const record = await brain.record(required(id));
        await printEvents(store.paths(record.id).events, record.id, after, shownRedactor(brain, record));
        return 0;
      }
      case "compact": {
        const record = await brain.record(required(id));
        const policy = segmentPolicy(values);
        // The lock's own hint (brain run --server, brain attach) compacts nothing: a log is compacted closed.
        const closeFirst = (err: unknown) =>
          Promise.reject(throughDaemon(err, record.id, "close", "close it", ", then compact it again"));
        if (policy) {
          const children = (await brain.list()).filter(
            (r) => r.forked_from?.session === record.id || r.handoff_from?.session === record.id,
          );
          if (children.length > 0)
            throw new UsageError(
              `session ${record.id} was forked or handed off to ${children.map((c) => c.id).join(", ")}: their history reads its whole log, so its segments stay`,
            );
          const g = await retireSegments(store.paths(record.id).events, record.id, policy).catch(closeFirst);
          process.stdout.write(
            values.json
              ? `${JSON.stringify({ segments: g })}\n`
              : `${record.id}: ${g.archived} segment(s) archived, ${g.dropped} dropped, ${g.bytesFreed} bytes freed\n`,
          );
        }
        const r = await compactLog(store.paths(record.id).events, record.id).catch(closeFirst);
        process.stdout.write(
          values.json
            ? `${JSON.stringify(r)}\n`
            : `${record.id}: ${r.eventsBefore} → ${r.eventsAfter} events, ${r.bytesBefore} → ${r.bytesAfter} bytes (${r.turns} turn(s) folded)\n`,
        );
        return 0;
      }
      case "rebuild": {
        const record = await brain.record(required(id));
        const { seeded, aside } = await brain
          .rebuild(record.id)
          .catch((err) => Promise.reject(throughDaemon(err, record.id, "rebuild", "rebuild it")));
        const how =
          seeded.how === "native"
            ? "in the harness's own format"
            : "as a marked summary in the next prompt (Brain cannot write this harness's own format)";
        process.stdout.write(
          values.json
            ? `${JSON.stringify({ id: record.id, seeded, aside })}\n`
            : `${record.id}: native state rebuilt from the log ${how}; the native files from before its first rebuild are in ${aside}\n`,
        );
        return 0;
      }
      case "rm": {
        const session = required(id);
        const dependents = await dependentsOf(brain, session);
        if (dependents.length > 0 && !values.force)
          throw new SessionError(
            "conflict",
            dependedOn(session, dependents, `\`brain sessions rm ${session} --force\``),
          );
        const forced = values.force ? "?force=true" : "";
        await brain.delete(session).catch((err) => Promise.reject(deleteThroughDaemon(err, session, forced)));
        const lost =
          dependents.length > 0
            ? `; the ${dependents.length} session(s) forked or handed off from it lost the history they had from it`
            : "";
        process.stdout.write(
          values.json ? `${JSON.stringify({ id: session, dependents })}\n` : `${session}: deleted${lost}\n`,
        );
        return 0;
      }
      default:
        throw new UsageError(
          `unknown sessions verb "${verb}": use ls, show ID, events ID, compact ID, rebuild ID or rm ID`,
        );
    }
  });
}

/** `compact`'s segment options as a policy (undefined: leave the segments be). */
function segmentPolicy(values: {
  "archive-segments"?: boolean;
  "drop-segments"?: boolean;
  "max-log-mb"?: string;
}): SegmentPolicy | undefined {
  const archive = values["archive-segments"] === true;
  const drop = values["drop-segments"] === true;
  if (archive && drop) throw new UsageError("give --archive-segments or --drop-segments, not both");
  const mb = values["max-log-mb"];
  const max = mb === undefined ? undefined : Number(mb);
  if (max !== undefined && !(max > 0))
    throw new UsageError(`--max-log-mb takes a positive number, not "${mb}"`);
  if (max !== undefined && !archive && !drop)
    throw new UsageError(
      "--max-log-mb says how much to keep: give --archive-segments or --drop-segments too",
    );
  if (!archive && !drop) return undefined;
  // Without a size, every sealed segment goes; with one, only the oldest past it.
  const age = max === undefined ? 0 : Number.POSITIVE_INFINITY;
  const policy: SegmentPolicy = archive ? { archiveAfterMs: age } : { dropAfterMs: age };
  if (max !== undefined) policy.maxBytes = max * 1024 * 1024;
  return policy;
}

/**
 * A session's state as the table shows it: the record's status, except "idle" for one whose record says open
 * while no live process holds its log (the `brain run` that had it was killed, a daemon that had it stopped):
 * nothing was left to record it closed, and the next run or daemon that opens it recovers it. One read of the
 * log's lock per open session, never of its log. A lock that cannot be read keeps "open" (who holds it is unknown).
 */
async function shownState(session: { id: string; status: string }, store: FsSessionStore): Promise<string> {
  if (session.status !== "open") return session.status;
  const holder = await liveHolder(store.paths(session.id).events).catch(() => -1);
  return holder === undefined ? "idle" : "open";
}

function required(id: string | undefined): string {
  if (!id) throw new UsageError("give a session ID (see `brain sessions ls`)");
  return id;
}

/** Events per read of `sessions events`: a long log is printed a page at a time, never held whole. */
export const EVENTS_PAGE = 500;

/**
 * Prints the log's events after `after`, a page at a time (each page's cursor is bisected for, not read from the
 * start), waiting for stdout to drain: the whole log read at once held a 300,000-event session's 450 MB in memory
 * before printing a line. Stops when stdout's reader is gone (bin/brain.js reports it).
 */
async function printEvents(
  path: string,
  session: string,
  after: number | undefined,
  redactor: Redactor,
): Promise<void> {
  let cursor = after ?? 0;
  let closed = false;
  const stopWatching = onStdoutClosed(() => {
    closed = true;
  });
  try {
    while (!closed) {
      const page = await readEventsFile(path, undefined, { after: cursor, limit: EVENTS_PAGE, session });
      const text = page.map((event) => `${JSON.stringify(redactor.redactDeep(event))}\n`).join("");
      // A closed stdout rejects the wait (EPIPE): `closed` then ends the loop.
      if (text && !process.stdout.write(text)) await once(process.stdout, "drain").catch(() => {});
      if (page.length < EVENTS_PAGE) return;
      cursor = page.at(-1)!.seq;
    }
  } finally {
    stopWatching();
  }
}

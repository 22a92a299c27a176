// @ts-check
// What a fork or a handoff holds of the sessions it came from: their events up to where it left them (a fork's
// checkpoint, a handoff's seq). Its own log holds only its own turns; the daemon reads the rest from their logs
// whenever it is used (src/core/conversation-chain.ts ancestorEvents), and the page shows it the same way, above
// the session's own events, so a fork opens on the conversation it continues.

import { state } from "./page.js";
import { el } from "./parts.js";

/** Forks and handoffs nest; a damaged store must not make the page read on forever. */
const MAX_DEPTH = 16;
/** The most events read of one session's log for what it gave: a longer part is named, not shown. */
const MAX_READ = 10_000;

const path = (session, suffix = "") => `/v1/sessions/${encodeURIComponent(session)}${suffix}`;

/**
 * One part of the history a session came with: the session it is from, where it ends, and its events, or why
 * they are not shown (that session was deleted, or the part is longer than the page reads).
 * @typedef {{ from: string, end: string, events?: any[], why?: string, gone?: boolean }} Part
 */

/** Where the history `view` came with from its origin ends, as the page names it. */
const endOf = (view) =>
  view.forked_from ? `checkpoint ${view.forked_from.checkpoint}` : `event ${view.handoff_from.seq}`;

/** @returns {Promise<Part>} */
async function partOf(view) {
  const fork = view.forked_from;
  const from = (fork ?? view.handoff_from).session;
  const end = endOf(view);
  const limit = fork ? MAX_READ : Math.min(MAX_READ, view.handoff_from.seq);
  const page = await state.api.call("GET", `${path(from, "/log")}?after=0&limit=${limit}`);
  const events = page.events ?? [];
  if (!fork) {
    if (view.handoff_from.seq > MAX_READ) return { from, end, why: "too long to show here" };
    return { from, end, events: events.filter((e) => e.seq <= view.handoff_from.seq) };
  }
  const at = events.findIndex((e) => e.type === "checkpoint.created" && e.data?.id === fork.checkpoint);
  if (at >= 0) return { from, end, events: events.slice(0, at + 1) };
  // Its checkpoint's event is past the page, or retention retired it (then none of that log is history).
  if (events.length === limit && (page.last_seq ?? 0) > (events.at(-1)?.seq ?? 0))
    return { from, end, why: "too long to show here" };
  return { from, end, events: [] };
}

/** The parts of the history `view` came with, oldest first. */
async function ancestry(view) {
  /** @type {Part[]} */
  const parts = [];
  for (let depth = 0; depth < MAX_DEPTH && (view.forked_from ?? view.handoff_from); depth++) {
    const from = (view.forked_from ?? view.handoff_from).session;
    let part;
    try {
      part = await partOf(view);
      view = await state.api.call("GET", path(from));
    } catch (err) {
      // Deleted (forced, as others came from it): its part of the conversation went with it.
      const gone = err?.status === 404;
      parts.unshift(part ?? { from, end: endOf(view), why: err?.message ?? String(err), gone });
      break;
    }
    parts.unshift(part);
  }
  return parts;
}

/**
 * Shows the history `view`'s session came with at the top of `transcript`, each part under a note naming the
 * session it is from. Its events are not this session's: shown with seq 0, they never count as ones it skipped.
 * @param {(id: string) => void} open opens a session of the history
 */
export async function showHistory(transcript, view, open) {
  if (!(view?.forked_from ?? view?.handoff_from)) return;
  for (const { from, end, events, why, gone } of await ancestry(view)) {
    if (state.transcript !== transcript) return;
    const said = events
      ? `From session ${from}, up to its ${end}:`
      : `The history from session ${from} up to its ${end} is not shown (${why}).`;
    // A session deleted has nothing to open.
    const opener = gone
      ? undefined
      : el("button", { type: "button", class: "open-origin", onclick: () => open(from) }, "Open it");
    transcript.push(el("div", { class: "note inherited", "data-inherited": from }, `${said} `, opener));
    for (const event of events ?? []) {
      try {
        transcript.add({ ...event, seq: 0 });
      } catch (err) {
        transcript.note(`an event of session ${from} could not be shown: ${err?.message ?? err}`);
      }
    }
    // History is settled: a turn it holds open (a handoff cut mid-turn) is not one this session runs.
    transcript.turn = undefined;
  }
}

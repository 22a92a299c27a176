// @ts-check
// One session's page: its head (status, who controls it) and its transcript, read from the log near its end and
// followed live from there.
import { newKey } from "./api.js";
import { checkpointsBefore, listCheckpoint, resetControls } from "./controls.js";
import { showHistory } from "./lineage.js";
import { $, announce, hashParams, setHash, showError, state } from "./page.js";
import { refreshSoon, statusOf } from "./sessions.js";
import { Transcript } from "./transcript.js";

export function updateHead(view) {
  // A view of the session left behind (an action's answer that came after another session was opened) is not
  // this page's to show: it would name that session's status and controller in this one's head.
  if (!view || view.id !== state.session) return;
  // An older view than the one shown (a list read before a Close, answered after it) would put the session's
  // older status back until the next refresh. A session's status changes with an event of its log, so the view
  // with the lower last seq is the older one; a view without it (a listed session the daemon has not open) tells
  // none, and one with the same (the controller changes outside the log) is taken as the newer.
  const shown = state.view?.id === view.id ? state.view.last_seq : undefined;
  if (shown !== undefined && view.last_seq !== undefined && view.last_seq < shown) return;
  // Only the session's own view counts its native state on disk (a listed one, or an action's answer, leaves it
  // out: it would walk a native dir per session): the count of the last such view stays until the next.
  const disk = view.native_disk ?? (state.view?.id === view.id ? state.view.native_disk : undefined);
  state.view = disk ? { ...view, native_disk: disk } : view;
  $("s-disk").textContent = disk ? diskText(disk) : "";
  $("images-label").hidden = !state.harnesses?.get(view.harness)?.images;
  const status = state.transcript?.running ? "running" : statusOf(view);
  $("s-status").textContent = status;
  $("s-status").dataset.state = status;
  const mine = view.controller === state.api.client;
  $("s-control").textContent = view.controller
    ? mine
      ? "you control it"
      : `controlled by ${view.controller}`
    : "";
  $("take-control").hidden = !view.controller || mine;
}

/** What a session's native state takes on the daemon's disk, as its head says it (docs/protocol.md). */
function diskText({ native_bytes, rebuild_aside_bytes, unreadable }) {
  const aside = rebuild_aside_bytes ? `, ${sizeText(rebuild_aside_bytes)} kept by a rebuild` : "";
  const skipped = unreadable ? `, ${unreadable} unreadable` : "";
  return `native state ${sizeText(native_bytes)}${aside}${skipped}`;
}

function sizeText(bytes) {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let unit = 0;
  while (bytes >= 1024 && unit < units.length - 1) [bytes, unit] = [bytes / 1024, unit + 1];
  return unit === 0 ? `${bytes} bytes` : `${bytes.toFixed(1)} ${units[unit]}`;
}

/**
 * The refusal of an action (a prompt, an answer) because another client controls the session, in this page's
 * terms: the daemon's words tell an API client which call takes control (a POST with a client id), and this page
 * has a button for it. Told by the session's view, read again (the daemon's 409 says no more than "conflict", as
 * for a turn still running), which also puts who controls it in the head. Undefined for any other failure.
 */
export async function controlledElsewhere(session, err) {
  if (err?.status !== 409) return undefined;
  let view;
  try {
    view = await state.api.call("GET", `/v1/sessions/${encodeURIComponent(session)}`);
  } catch {
    return undefined;
  }
  updateHead(view);
  if (!view.controller || view.controller === state.api.client) return undefined;
  return new Error(
    `Refused: client "${view.controller}" controls this session (another tab, or another client of the daemon). Press Take control to act from this tab, or watch it.`,
  );
}

/**
 * The open session is no more (deleted, or never this token's): its head says so. The last status it said ("idle",
 * "running") stayed for good, as no view of it comes again.
 */
function gone() {
  state.view = undefined;
  $("s-status").textContent = "not found";
  $("s-status").dataset.state = "stopped";
  $("s-control").textContent = "";
  $("take-control").hidden = true;
}

export function setTurnState() {
  const running = state.transcript?.running;
  $("turn-state").textContent = running ? "turn running…" : "";
  $("steer").disabled = !running;
  $("interrupt").disabled = !running;
  $("send").disabled = running;
  if (state.view?.id === state.session) updateHead(state.view);
}

/** What a screen reader says of an event a user must hear (the live region's words), or undefined. */
function heard(event) {
  const d = event.data ?? {};
  switch (event.type) {
    case "turn.started":
      return "Turn started.";
    case "turn.settled":
      return d.error ? `Turn ${d.status}: ${d.error.code}: ${d.error.message}` : `Turn ${d.status}.`;
    case "permission.requested":
      return `Permission requested: allow tool ${d.tool}?`;
    case "question.requested":
      return `Question waiting: ${d.title ?? d.question}`;
  }
}

/** Events a session's page reads at first: a longer log starts near its end, with a button for the rest. */
const TAIL_EVENTS = 2000;
/** Entries a session's transcript keeps as events come: a tab left open on a busy session stays this size. */
const SHOWN_ENTRIES = 2000;

/**
 * Where a long session's transcript starts, so that opening a session of a million events reads and renders a
 * few thousand: at the first turn that starts among its last TAIL_EVENTS events, or at their first when one turn
 * holds them all. Requests still waiting for an answer that came before that are returned, to be shown first.
 */
async function tailStart(id, view) {
  const last = view.last_seq ?? 0;
  if (last <= TAIL_EVENTS) return { after: 0, earlier: [], midTurn: false };
  const page = await state.api.call(
    "GET",
    `/v1/sessions/${encodeURIComponent(id)}/log?after=${last - TAIL_EVENTS}&limit=${TAIL_EVENTS}`,
  );
  // A turn's first event is its prompt (turn.started comes right after it).
  const turn = page.events.find((event) => event.type === "user.prompt");
  const after = turn ? turn.seq - 1 : last - TAIL_EVENTS;
  const shown = new Set(page.events.filter((event) => event.seq > after).map((event) => event.data?.id));
  const earlier = (view.pending ?? []).filter((request) => !shown.has(request.id));
  return { after, earlier, midTurn: !turn };
}

/**
 * The composer's text and picked images belong to the session they were meant for: another session opened keeps
 * them with the one left, and shows the draft and images of the one opened (none if none), so that they are never
 * sent to a session they were not meant for.
 */
function swapDraft(from, to) {
  if (from === to) return;
  const text = $("prompt").value;
  if (from !== undefined && text) state.drafts.set(from, text);
  else state.drafts.delete(from);
  $("prompt").value = state.drafts.get(to) ?? "";
  state.drafts.delete(to);
  // Kept as the files, not the input's FileList: clearing the input empties that list in place.
  const input = /** @type {HTMLInputElement} */ ($("images"));
  const files = [...(input.files ?? [])];
  if (from !== undefined && files.length) state.images.set(from, files);
  else state.images.delete(from);
  const kept = new DataTransfer();
  for (const file of state.images.get(to) ?? []) kept.items.add(file);
  input.files = kept.files;
  state.images.delete(to);
}

export async function openSession(id, all = false) {
  state.stream?.stop();
  swapDraft(state.session, id);
  state.session = id;
  resetControls();
  const params = hashParams();
  params.set("session", id);
  params.delete("token");
  setHash(params);
  $("empty").hidden = true;
  $("session").hidden = false;
  $("s-title").textContent = id;
  $("s-disk").textContent = ""; // the session left's count, until this one's view comes
  showError("s-error");
  showError("s-stream");
  $("announce").textContent = ""; // another session's words
  const transcript = new Transcript(
    $("transcript"),
    async (requestId, body) => {
      try {
        return await state.api.call(
          "POST",
          `/v1/sessions/${encodeURIComponent(id)}/requests/${encodeURIComponent(requestId)}`,
          body,
          newKey(), // one per click: a retry of it is the same answer
        );
      } catch (err) {
        throw (await controlledElsewhere(id, err)) ?? err;
      }
    },
    // Show all is asked for: then every entry stays.
    {
      client: state.api.client,
      limit: all ? undefined : SHOWN_ENTRIES,
      showAll: () => openSession(id, true),
    },
  );
  transcript.clear();
  state.transcript = transcript;
  setTurnState();
  for (const li of /** @type {HTMLCollectionOf<HTMLElement>} */ ($("sessions").children))
    li.classList.toggle("selected", li.dataset.session === id);
  let view;
  try {
    view = await state.api.call("GET", `/v1/sessions/${encodeURIComponent(id)}`);
  } catch (err) {
    if (state.transcript === transcript) showError("s-error", err);
  }
  // Another session was opened while this one's view was on its way (a second click, a link's hash while
  // signing in): its stream is the page's now, and one started here would never be stopped, writing this
  // session's events into that transcript and holding one of the tenant's streams.
  if (state.transcript !== transcript) return;
  if (view) updateHead(view);
  // Events up to the view's last are the session's past, read to fill the transcript: only what comes after it,
  // and the requests still waiting, are announced.
  const past = view?.last_seq ?? Number.MAX_SAFE_INTEGER;
  // (A view's pending also holds the tool calls in flight, which ask nothing of the user.)
  const waiting = (view?.pending ?? []).filter((p) => p.kind.endsWith(".requested")).length;
  if (waiting) announce(`${waiting} request${waiting === 1 ? "" : "s"} waiting for an answer.`);
  let start = { after: 0, earlier: [], midTurn: false };
  if (view && !all) {
    try {
      start = await tailStart(id, view);
    } catch (err) {
      // The whole log, then; said only while this session is open, or it would read as the next one's.
      if (state.transcript === transcript) showError("s-error", err);
    }
    if (state.transcript !== transcript) return;
  }
  if (start.after > 0) {
    transcript.skipped(start.after, () => openSession(id, true));
    checkpointsBefore(start.after, () => openSession(id, true));
    // The turn that holds the first events shown started before them: it runs, its requests wait, as the view says.
    if (start.midTurn) transcript.turn = view.active_turn;
    for (const request of start.earlier)
      transcript.add({
        type: request.kind,
        turn: request.turn,
        data: request.data,
        seq: 0,
        ts: "",
        session: id,
      });
    setTurnState();
  } else if (view) {
    // Shown from its first event: a fork's or handoff's page starts with the conversation it continues.
    await showHistory(transcript, view, (from) => openSession(from));
    if (state.transcript !== transcript) return;
  }
  state.stream = state.api.follow(
    id,
    start.after,
    (event) => {
      // One event the page cannot show is named in its place; the transcript goes on with the next.
      try {
        transcript.add(event);
      } catch (err) {
        transcript.note(`event ${event.seq} (${event.type}) could not be shown: ${err?.message ?? err}`);
      }
      if (event.type === "checkpoint.created") listCheckpoint(event);
      const words = event.seq > past ? heard(event) : undefined;
      if (words) announce(words);
      if (event.type === "turn.started" || event.type === "turn.settled") {
        setTurnState();
        // The past's turns are older than the view just read: only a turn of now can change the list's status.
        if (event.seq > past) refreshSoon();
      }
    },
    (conn, why, status) => {
      if (state.transcript !== transcript) return; // another session's stream now
      if (status === 404) gone();
      $("conn").textContent = conn === "reconnecting" ? "reconnecting…" : conn;
      $("conn").dataset.state = conn;
      // The stream's own line, apart from an action's error (#s-error): an action clears only its own, and the
      // stream's next try does not wipe out an action's failure. A refused stream (the tenant's limit of streams,
      // a daemon restarting) says why while it waits to try again, and the reason goes once it is back.
      if (conn === "stopped") showError("s-stream", new Error(why ?? "the stream stopped"));
      else if (conn === "reconnecting" && why)
        showError("s-stream", new Error(`the event stream is down: ${why}`));
      else if (conn === "live") showError("s-stream");
    },
    (after, firstSeq) => {
      if (state.transcript !== transcript) return;
      transcript.dropped(after, firstSeq);
    },
  );
}

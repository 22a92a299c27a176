// @ts-check
// The open session's delete (confirmed first; a session others were forked or handed off from is deleted only when
// asked again, as the daemon's 409 says what they lose) and its checkpoints, each with Fork from here (a new
// session that starts from it) and Restore files (its native files written into a directory on the daemon's
// machine, as `brain restore` does). A failure is shown in the page's error line, naming what failed.
import { newKey } from "./api.js";
import { act, openMade } from "./composer.js";
import { $, announce, hashParams, setHash, state } from "./page.js";
import { el } from "./parts.js";
import { controlledElsewhere } from "./session.js";
import { refreshSessions } from "./sessions.js";

const path = (session, suffix = "") => `/v1/sessions/${encodeURIComponent(session)}${suffix}`;

/** `err` with what failed said first; its status kept, for act's check of who controls the session. */
function failed(what, err) {
  return Object.assign(new Error(`${what} failed: ${err?.message ?? err}`), { status: err?.status });
}

/** The session whose delete the confirm panel asks about, and whether it asks to delete it anyway (force). */
let asking;

/** Hides what the page showed of the session left: its delete's confirm and its checkpoints. */
export function resetControls() {
  asking = undefined;
  $("delete-confirm").hidden = true;
  $("checkpoint-list").replaceChildren();
  $("checkpoints").hidden = true;
}

function ask(session, text, force) {
  asking = { session, force };
  $("delete-text").textContent = text;
  $("delete-yes").textContent = force ? "Delete anyway" : "Delete";
  $("delete-confirm").hidden = false;
  $("delete-yes").focus();
}

/** The deleted session's page is gone: back to the list, which no longer holds it. */
function left(session) {
  state.stream?.stop();
  state.stream = undefined;
  state.transcript = undefined;
  state.session = undefined;
  state.view = undefined;
  state.drafts.delete(session);
  state.images.delete(session);
  $("prompt").value = "";
  $("images").value = "";
  resetControls();
  const params = hashParams();
  params.delete("session");
  setHash(params);
  $("session").hidden = true;
  $("empty").hidden = false;
  $("conn").textContent = "idle";
  $("conn").dataset.state = "idle";
}

async function remove(session, force) {
  const key = newKey(); // this click's: a retry after a dropped connection gets 204 again, not a 404
  try {
    await state.api.call("DELETE", path(session, force ? "?force=true" : ""), undefined, key);
  } catch (err) {
    // Sessions were forked or handed off from it: the daemon names them and what they lose; asked again, the
    // user may delete it anyway. Another client holding control is a 409 too, said as such.
    if (err?.status === 409 && !force) {
      const controlled = await controlledElsewhere(session, err);
      if (controlled) throw failed(`Deleting session ${session}`, controlled);
      // The daemon's words name the API call that deletes it anyway; here that is the button below.
      const said = err.message.replace(/ with DELETE \S+\?force=true/, " with the Delete anyway button");
      if (state.session === session) ask(session, `Not deleted: ${said}.`, true);
      return;
    }
    throw failed(`Deleting session ${session}`, err);
  }
  if (state.session === session) left(session);
  await refreshSessions();
}

/** Adds a checkpoint the open session's log recorded (its checkpoint.created event) to the list. */
export function listCheckpoint(event) {
  const { id, files = [] } = event.data ?? {};
  const list = $("checkpoint-list");
  if (typeof id !== "string" || list.querySelector(`li[data-checkpoint="${CSS.escape(id)}"]`)) return;
  const session = state.session;
  const into = el("input", {
    class: "restore-into",
    ariaLabel: `Directory to restore checkpoint ${id} into`,
    placeholder: "/absolute/empty/dir on the daemon's machine",
  });
  const restoreForm = el(
    "span",
    { class: "restore-form", hidden: true },
    into,
    el(
      "button",
      { type: "button", class: "restore-write", onclick: () => restore(session, id, into.value) },
      "Write files",
    ),
  );
  const when = event.ts ? ` · ${new Date(event.ts).toLocaleString()}` : "";
  list.append(
    el(
      "li",
      { "data-checkpoint": id },
      el("code", {}, id),
      el("span", { class: "muted" }, `${files.length} file${files.length === 1 ? "" : "s"}${when}`),
      el(
        "button",
        { type: "button", class: "fork-from", onclick: () => forkFrom(session, id) },
        "Fork from here",
      ),
      el(
        "button",
        {
          type: "button",
          class: "restore",
          onclick: () => {
            restoreForm.hidden = false;
            into.focus();
          },
        },
        "Restore files…",
      ),
      restoreForm,
    ),
  );
  shown();
}

/** Shows the list, with how many checkpoints it holds. */
function shown() {
  const count = $("checkpoint-list").querySelectorAll("li[data-checkpoint]").length;
  $("checkpoints").hidden = false;
  $("checkpoints-count").textContent = `Checkpoints (${count})`;
}

/**
 * The open session's transcript starts after event `after` (a long log is read near its end), so the checkpoints
 * made before it are not among the events read: the list says so, with a button to read the whole log.
 */
export function checkpointsBefore(after, readAll) {
  $("checkpoint-list").prepend(
    el(
      "li",
      { class: "muted checkpoints-before" },
      `Checkpoints made before event ${after + 1} are not listed: this long session was read from near its end. `,
      el("button", { type: "button", class: "read-all", onclick: readAll }, "Read the whole log"),
    ),
  );
  shown();
}

/** A new session that starts from checkpoint `id` of `session`, opened once made. */
function forkFrom(session, id) {
  if (state.session !== session) return;
  return act(async () => {
    let view;
    try {
      view = await state.api.call("POST", path(session, "/fork"), { checkpoint: id }, newKey());
    } catch (err) {
      throw failed(`Forking session ${session} from checkpoint ${id}`, err);
    }
    await openMade(session, view);
  });
}

/** Writes checkpoint `id`'s native files into `into`, a new or empty directory on the daemon's machine. */
function restore(session, id, into) {
  if (state.session !== session) return;
  return act(async () => {
    const dir = into.trim();
    if (!dir.startsWith("/"))
      throw new Error(
        `Restoring checkpoint ${id} failed: give the absolute path of a new or empty directory on the daemon's machine, not "${dir}"`,
      );
    try {
      await state.api.call("POST", path(session, "/restore"), { checkpoint: id, into: dir }, newKey());
    } catch (err) {
      throw failed(`Restoring checkpoint ${id} of session ${session} into ${dir}`, err);
    }
    announce(`Checkpoint ${id} restored into ${dir}.`);
    const row = $("checkpoint-list").querySelector(`li[data-checkpoint="${CSS.escape(id)}"]`);
    row?.append(el("span", { class: "restored muted" }, `restored into ${dir}`));
  });
}

export function wireControls() {
  $("delete").onclick = () => {
    if (state.session === undefined) return;
    ask(
      state.session,
      `Delete session ${state.session}, its log, checkpoints and files? This cannot be undone.`,
      false,
    );
  };
  $("delete-no").onclick = () => resetConfirm();
  $("delete-yes").onclick = () => {
    const asked = asking;
    resetConfirm();
    if (!asked || asked.session !== state.session) return;
    return act((session) => remove(session, asked.force));
  };
}

function resetConfirm() {
  asking = undefined;
  $("delete-confirm").hidden = true;
}

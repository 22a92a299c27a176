// @ts-check
// The composer and the open session's actions: prompt (with images), steer, interrupt, checkpoint, fork, hand
// off, close and take control; an action's refusal is shown under the transcript.
import { newKey } from "./api.js";
import { $, showError, state } from "./page.js";
import { controlledElsewhere, openSession, updateHead } from "./session.js";
import { refreshSessions } from "./sessions.js";

/** Runs `fn` on the open session: its id is taken now, as another may be opened before `fn` sends anything. */
export async function act(fn) {
  showError("s-error");
  const session = state.session;
  try {
    return await fn(session);
  } catch (err) {
    const shown = (await controlledElsewhere(session, err)) ?? err;
    // Another session opened meanwhile: this failure, shown there, would read as that session's.
    if (state.session === session) showError("s-error", shown);
  }
}

/** A picked file as the API takes an image: its type and its bytes in base64. */
function imageOf(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () =>
      resolve({ mime_type: file.type, data: String(reader.result).split(",", 2)[1] ?? "" });
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/**
 * Lists the session an action on `from` made (a fork, a handoff) and opens it, unless another session was opened
 * while the action was on its way: that one is what the user looks at and types into now.
 */
export async function openMade(from, view) {
  await refreshSessions();
  if (state.session === from) await openSession(view.id);
}

/**
 * Clears `text`, sent to `session`, from the composer: from the box while that session is open and the box still
 * holds it, else from the draft kept with the session. Whether the box was cleared.
 */
function sent(session, text) {
  if (state.session !== session) {
    if (state.drafts.get(session) === text) state.drafts.delete(session);
    return false;
  }
  if ($("prompt").value !== text) return false;
  $("prompt").value = "";
  return true;
}

const path = (session, suffix = "") => `/v1/sessions/${encodeURIComponent(session)}${suffix}`;

export function wireComposer() {
  $("composer").onsubmit = async (e) => {
    e.preventDefault();
    const text = $("prompt").value;
    if (!text.trim()) return;
    const session = state.session;
    const key = newKey(); // this send's: a retry of it runs one turn
    const files = [...$("images").files];
    const ok = await act(async (session) => {
      const images = await Promise.all(files.map(imageOf));
      const body = images.length ? { text, images } : { text };
      return state.api.call("POST", path(session, "/prompt"), body, key);
    });
    // What was typed while the prompt was on its way (the next one, or another session's) is the user's: kept.
    if (!ok) return;
    if (sent(session, text)) $("images").value = "";
    // Sent from a session left meanwhile: its images went with the prompt, and are not kept for it.
    else {
      const kept = state.images.get(session);
      if (kept?.length === files.length && kept.every((file, i) => file === files[i]))
        state.images.delete(session);
    }
  };
  // Sends what is typed the way the session takes it now: a prompt, or while a turn runs (Send is off) a steer of
  // it; a prompt then would only be refused ("steer or interrupt it first").
  $("prompt").onkeydown = (e) => {
    if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
    if ($("send").disabled && !$("steer").disabled) $("steer").click();
    else $("composer").requestSubmit();
  };
  $("steer").onclick = async () => {
    const text = $("prompt").value;
    if (!text.trim()) return;
    const session = state.session;
    const key = newKey(); // one per click: a retry of it steers once
    const ok = await act((session) => state.api.call("POST", path(session, "/steer"), { text }, key));
    if (ok) sent(session, text);
  };
  // One key per click: a retry after a dropped connection interrupts once, and makes one checkpoint.
  $("interrupt").onclick = () =>
    act((session) => state.api.call("POST", path(session, "/interrupt"), undefined, newKey()));
  $("checkpoint").onclick = () =>
    act((session) => state.api.call("POST", path(session, "/checkpoints"), undefined, newKey()));
  $("fork").onclick = () =>
    act(async (session) =>
      openMade(session, await state.api.call("POST", path(session, "/fork"), {}, newKey())),
    );
  // A new session on the chosen harness that continues this conversation (seeded from Brain's log). One key per
  // click: a retry of a handoff whose answer was lost gets the session the first made, not a second one.
  $("handoff").onclick = () =>
    act(async (session) => {
      const body = { to: $("handoff-to").value };
      openMade(session, await state.api.call("POST", path(session, "/handoff"), body, newKey()));
    });
  $("close").onclick = () =>
    act(async (session) =>
      updateHead(await state.api.call("POST", path(session, "/close"), undefined, newKey())),
    );
  $("take-control").onclick = () =>
    act(async (session) => {
      // One key per click: a retry gets the first answer, and takes control back from no one who took it since.
      const body = { client: state.api.client };
      const { controller } = await state.api.call("POST", path(session, "/control"), body, newKey());
      // The head from the answer: the list's refresh tells it only of a session among the newest listed.
      if (state.view?.id === session) updateHead({ ...state.view, controller });
      await refreshSessions();
    });
}

// @ts-check
// The session list: the tenant's newest sessions with their status, refreshed while the tab is shown, a page at a
// time ("Show more"), and the form that creates a new one.
import { newKey } from "./api.js";
import { $, LIST_PAGE, showError, state } from "./page.js";
import { openSession, updateHead } from "./session.js";

export function statusOf(s) {
  if (s.status === "closed") return "closed";
  if ((s.pending ?? []).some((p) => p.kind !== "tool.call")) return "waiting";
  if (s.active_turn) return "running";
  return "idle";
}

/**
 * Refreshes the session list 3 s after the previous refresh finished (or failed), never on a fixed beat: behind a
 * slow daemon a tab waits for its answer instead of sending more calls to pile up. A hidden tab skips its turns.
 * Signing in again starts a new loop, which ends this one.
 */
export function pollSessions() {
  const loop = Symbol("poll");
  state.poll = loop;
  const next = () => {
    if (state.poll === loop) setTimeout(tick, 3000);
  };
  const tick = () => {
    if (state.poll !== loop) return;
    if (document.visibilityState === "hidden") return next();
    refreshSessions()
      .catch((err) => console.error(err))
      .finally(next);
  };
  next();
}

/**
 * The newest `state.listSize` sessions, a page at a time (the daemon's pages hold at most 1000): a tenant with
 * thousands of sessions costs each refresh what it shows, not the whole list.
 */
async function newestSessions(api) {
  const sessions = [];
  let after;
  do {
    const limit = Math.min(1000, state.listSize - sessions.length);
    const cursor = after === undefined ? "" : `&after=${encodeURIComponent(after)}`;
    const page = await api.call("GET", `/v1/sessions?order=newest&limit=${limit}${cursor}`);
    sessions.push(...page.sessions);
    after = page.next;
  } while (after !== undefined && sessions.length < state.listSize);
  return { sessions, more: after !== undefined };
}

export async function refreshSessions() {
  const api = state.api;
  let found;
  try {
    found = await newestSessions(api);
  } catch {
    return;
  }
  // Signed out (or in with another token) while the list was on its way: it is not this page's to show.
  if (state.api !== api) return;
  const more = found.more;
  state.sessions = found.sessions;
  $("more-sessions").hidden = !more;
  const list = $("sessions");
  // The session the keyboard is on keeps the focus across a refresh, which makes every entry anew.
  const focused = list.contains(document.activeElement)
    ? /** @type {HTMLElement} */ (document.activeElement).dataset.session
    : undefined;
  list.replaceChildren(
    ...state.sessions.map((s) => {
      const li = document.createElement("li");
      li.dataset.session = s.id;
      if (s.id === state.session) li.classList.add("selected");
      const status = statusOf(s);
      li.innerHTML = `<span class="id"></span> <span class="badge" data-state="${status}">${status}</span><div class="muted"></div>`;
      li.querySelector(".id").textContent = s.id.slice(0, 8);
      li.querySelector(".muted").textContent = `${s.harness} · ${new Date(s.created_at).toLocaleString()}`;
      li.onclick = () => openSession(s.id);
      // Reached and opened from the keyboard alone, as a button is.
      li.tabIndex = 0;
      li.setAttribute("role", "button");
      li.onkeydown = (e) => {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        openSession(s.id);
      };
      return li;
    }),
  );
  if (focused)
    /** @type {HTMLElement | null} */ (
      list.querySelector(`li[data-session="${CSS.escape(focused)}"]`)
    )?.focus();
  if (state.session) updateHead(state.sessions.find((s) => s.id === state.session));
}

/**
 * Refreshes the list for a turn that started or settled while the session is shown. A burst of those (a busy
 * session, a stream that caught up after a reconnect) costs two list calls, not one per turn event: while one
 * refresh is on its way the others wait for it and are covered by one more.
 */
export function refreshSoon() {
  if (state.refreshing) {
    state.refreshAgain = true;
    return;
  }
  state.refreshAgain = false;
  state.refreshing = refreshSessions().finally(() => {
    state.refreshing = undefined;
    if (state.refreshAgain) refreshSoon();
  });
}

export function wireList() {
  $("new-session").onsubmit = async (e) => {
    e.preventDefault();
    showError("new-error");
    const tools = $("new-tools")
      .value.split(/[\s,]+/)
      .filter(Boolean);
    const model = $("new-model").value.trim();
    /** @type {{ agent?: string, harness?: string, config: object, permissions?: object }} */
    const body = {
      ...($("new-agent").value ? { agent: $("new-agent").value } : { harness: $("new-harness").value }),
      config: { ...(tools.length ? { tools } : {}), ...(model ? { model } : {}) },
    };
    if ($("new-permissions").value === "ask") body.permissions = { default: "ask" };
    try {
      const view = await state.api.call("POST", "/v1/sessions", body, newKey());
      await refreshSessions();
      await openSession(view.id);
    } catch (err) {
      showError("new-error", err);
    }
  };
  $("more-sessions").onclick = () => {
    state.listSize += LIST_PAGE;
    return refreshSessions();
  };
}

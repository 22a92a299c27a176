// @ts-check
// Brain's web UI: the sessions of your tenant with their status, and one session's live transcript with the
// controls to prompt, steer, interrupt, answer requests, checkpoint, fork and close. The token comes from the
// link the daemon printed (#token=...) and is kept in this browser; the open session is in the URL
// (#session=...), so a reload comes back to it and rebuilds it from the log.
import { Api } from "./api.js";
import { Transcript } from "./transcript.js";

/**
 * The page's element with this id. The page's ids name inputs, buttons and forms, so the one type covers what
 * the code reads of them (value, disabled, files, requestSubmit).
 * @param {string} id
 * @returns {HTMLInputElement & HTMLFormElement}
 */
const $ = (id) => /** @type {HTMLInputElement & HTMLFormElement} */ (document.getElementById(id));

/** How many sessions the list shows at first, and how many more each "Show more" adds. */
const LIST_PAGE = 100;

function clientId() {
  let id = sessionStorage.getItem("brain.client");
  if (!id) {
    id = `web-${Math.random().toString(36).slice(2, 10)}`;
    sessionStorage.setItem("brain.client", id);
  }
  return id;
}

function hashParams() {
  return new URLSearchParams(location.hash.slice(1));
}

function setHash(params) {
  const text = params.toString();
  history.replaceState(null, "", text ? `#${text}` : location.pathname);
}

const state = {
  api: undefined,
  session: undefined,
  view: undefined,
  stream: undefined,
  transcript: undefined,
  sessions: [],
  /** How many of the newest sessions the list shows: one page until "Show more" asks for the next. */
  listSize: LIST_PAGE,
  /** The session list's refresh loop now running (pollSessions). */
  poll: undefined,
  /** The refresh a turn event asked for, while it is on its way (refreshSoon). */
  refreshing: undefined,
  /** Whether another turn event came while it was: one more refresh follows it. */
  refreshAgain: false,
  /** The event stream's reason for being down, while the page shows it. */
  streamError: undefined,
};

function showError(id, err) {
  $(id).textContent = err ? (err.message ?? String(err)) : "";
}

/** `who`: the token's /v1/whoami when the caller has asked already. */
async function signIn(token, who) {
  const api = new Api(token, clientId());
  who ??= await api.call("GET", "/v1/whoami");
  state.api = api;
  $("who").textContent = who.auth ? `tenant ${who.tenant} · ${who.role}` : "no auth (loopback)";
  $("login").hidden = true;
  $("main").hidden = false;
  const harnesses = (await api.call("GET", "/v1/harnesses")).harnesses;
  state.harnesses = new Map(harnesses.map((h) => [h.name, h]));
  $("new-harness").replaceChildren(
    ...harnesses.map((h) =>
      Object.assign(document.createElement("option"), { value: h.name, textContent: h.name }),
    ),
  );
  if (harnesses.some((h) => h.name === "echo")) $("new-harness").value = "echo"; // works offline, no key
  $("handoff-to").replaceChildren(
    ...harnesses.map((h) =>
      Object.assign(document.createElement("option"), { value: h.name, textContent: h.name }),
    ),
  );
  const agents = (await api.call("GET", "/v1/agents")).agents;
  $("new-agent-label").hidden = agents.length === 0;
  $("new-agent").replaceChildren(
    Object.assign(document.createElement("option"), { value: "", textContent: "(none: pick a harness)" }),
    ...agents.map((a) =>
      Object.assign(document.createElement("option"), {
        value: a.id,
        textContent: a.name ? `${a.name} (${a.id})` : a.id,
      }),
    ),
  );
  await refreshSessions();
  pollSessions();
  const wanted = hashParams().get("session");
  if (wanted) await openSession(wanted);
}

function statusOf(s) {
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
function pollSessions() {
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
async function newestSessions() {
  const sessions = [];
  let after;
  do {
    const limit = Math.min(1000, state.listSize - sessions.length);
    const cursor = after === undefined ? "" : `&after=${encodeURIComponent(after)}`;
    const page = await state.api.call("GET", `/v1/sessions?order=newest&limit=${limit}${cursor}`);
    sessions.push(...page.sessions);
    after = page.next;
  } while (after !== undefined && sessions.length < state.listSize);
  return { sessions, more: after !== undefined };
}

async function refreshSessions() {
  let more;
  try {
    ({ sessions: state.sessions, more } = await newestSessions());
  } catch {
    return;
  }
  $("more-sessions").hidden = !more;
  const list = $("sessions");
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
      return li;
    }),
  );
  if (state.session) updateHead(state.sessions.find((s) => s.id === state.session));
}

/**
 * Refreshes the list for a turn that started or settled. Reading a long session back brings thousands of those at
 * once: while one refresh is on its way the others wait for it and are covered by one more, so a replay costs two
 * list calls, not one per turn event.
 */
function refreshSoon() {
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

function updateHead(view) {
  if (!view) return;
  state.view = view;
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

function setTurnState() {
  const running = state.transcript?.running;
  $("turn-state").textContent = running ? "turn running…" : "";
  $("steer").disabled = !running;
  $("interrupt").disabled = !running;
  $("send").disabled = running;
  if (state.view?.id === state.session) updateHead(state.view);
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

async function openSession(id, all = false) {
  state.stream?.stop();
  state.session = id;
  const params = hashParams();
  params.set("session", id);
  params.delete("token");
  setHash(params);
  $("empty").hidden = true;
  $("session").hidden = false;
  $("s-title").textContent = id;
  showError("s-error");
  const transcript = new Transcript(
    $("transcript"),
    (requestId, body) =>
      state.api.call(
        "POST",
        `/v1/sessions/${encodeURIComponent(id)}/requests/${encodeURIComponent(requestId)}`,
        body,
      ),
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
  let start = { after: 0, earlier: [], midTurn: false };
  if (view && !all) {
    try {
      start = await tailStart(id, view);
    } catch (err) {
      showError("s-error", err); // the whole log, then
    }
    if (state.transcript !== transcript) return;
  }
  if (start.after > 0) {
    transcript.skipped(start.after, () => openSession(id, true));
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
      if (event.type === "turn.started" || event.type === "turn.settled") {
        setTurnState();
        refreshSoon();
      }
    },
    (conn, why) => {
      if (state.transcript !== transcript) return; // another session's stream now
      $("conn").textContent = conn === "reconnecting" ? "reconnecting…" : conn;
      $("conn").dataset.state = conn;
      if (conn === "stopped") showError("s-error", new Error(why ?? "the stream stopped"));
      // A refused stream (the tenant's limit of streams, a daemon restarting) says why while it waits to try again,
      // and the reason goes once it is back; an action's error shown meanwhile is left alone.
      else if (conn === "reconnecting" && why) {
        showError("s-error", new Error(`the event stream is down: ${why}`));
        state.streamError = $("s-error").textContent;
      } else if (conn === "live" && state.streamError === $("s-error").textContent) showError("s-error");
      if (conn !== "reconnecting") state.streamError = undefined;
    },
    (after, firstSeq) => {
      if (state.transcript !== transcript) return;
      transcript.dropped(after, firstSeq);
    },
  );
}

async function act(fn) {
  showError("s-error");
  try {
    return await fn();
  } catch (err) {
    showError("s-error", err);
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

const path = (suffix = "") => `/v1/sessions/${encodeURIComponent(state.session)}${suffix}`;

function wire() {
  $("login-form").onsubmit = async (e) => {
    e.preventDefault();
    const token = $("login-token").value.trim();
    try {
      await signIn(token);
      localStorage.setItem("brain.token", token);
    } catch (err) {
      showError("login-error", err);
    }
  };
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
      const view = await state.api.call("POST", "/v1/sessions", body);
      await refreshSessions();
      await openSession(view.id);
    } catch (err) {
      showError("new-error", err);
    }
  };
  $("composer").onsubmit = async (e) => {
    e.preventDefault();
    const text = $("prompt").value;
    if (!text.trim()) return;
    const ok = await act(async () => {
      const images = await Promise.all([...$("images").files].map(imageOf));
      return state.api.call("POST", path("/prompt"), images.length ? { text, images } : { text });
    });
    if (ok) {
      $("prompt").value = "";
      $("images").value = "";
    }
  };
  $("prompt").onkeydown = (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("composer").requestSubmit();
  };
  $("steer").onclick = async () => {
    const text = $("prompt").value;
    if (!text.trim()) return;
    const ok = await act(() => state.api.call("POST", path("/steer"), { text }));
    if (ok) $("prompt").value = "";
  };
  $("interrupt").onclick = () => act(() => state.api.call("POST", path("/interrupt")));
  $("checkpoint").onclick = () => act(() => state.api.call("POST", path("/checkpoints")));
  $("fork").onclick = () =>
    act(async () => {
      const view = await state.api.call("POST", path("/fork"), {});
      await refreshSessions();
      await openSession(view.id);
    });
  // A new session on the chosen harness that continues this conversation (seeded from Brain's log).
  $("handoff").onclick = () =>
    act(async () => {
      const view = await state.api.call("POST", path("/handoff"), { to: $("handoff-to").value });
      await refreshSessions();
      await openSession(view.id);
    });
  $("close").onclick = () => act(async () => updateHead(await state.api.call("POST", path("/close"))));
  $("more-sessions").onclick = () => {
    state.listSize += LIST_PAGE;
    return refreshSessions();
  };
  $("take-control").onclick = () =>
    act(async () => {
      await state.api.call("POST", path("/control"), { client: state.api.client });
      await refreshSessions();
    });
}

/**
 * Signs in with the token a link carried (#token=...), and keeps it, once it works. A link is easy to send: when
 * this browser keeps another token, the page names the link's tenant and asks first, so a link holding another
 * tenant's token cannot quietly move this browser, and what is typed in it, to that tenant. Whether it signed in.
 */
async function signInFromLink(token) {
  const kept = localStorage.getItem("brain.token");
  const who = await new Api(token, clientId()).call("GET", "/v1/whoami");
  if (kept && kept !== token) {
    const as = who.auth ? `tenant ${who.tenant} (${who.role})` : "a daemon without auth";
    const question = `This link signs in as ${as}, with a token other than the one this browser keeps. Sign in with the link's token instead?`;
    if (!confirm(question)) return false;
  }
  localStorage.setItem("brain.token", token);
  await signIn(token, who);
  return true;
}

/** A link pasted into this tab (#token=..., #session=...) acts as if it were opened afresh. */
async function onHashChange() {
  const params = hashParams();
  const token = params.get("token");
  if (token) {
    params.delete("token");
    setHash(params);
    try {
      await signInFromLink(token);
    } catch (err) {
      $("login").hidden = false;
      $("main").hidden = true;
      showError("login-error", err);
    }
    return;
  }
  const session = params.get("session");
  if (state.api && session && session !== state.session) await openSession(session);
}

async function start() {
  wire();
  window.addEventListener("hashchange", onHashChange);
  const params = hashParams();
  const fromLink = params.get("token");
  if (fromLink) {
    params.delete("token");
    setHash(params);
  }
  const token = localStorage.getItem("brain.token") ?? "";
  try {
    if (!(fromLink && (await signInFromLink(fromLink)))) await signIn(token);
  } catch (err) {
    $("login").hidden = false;
    if (token || fromLink) showError("login-error", err);
  }
}

start();

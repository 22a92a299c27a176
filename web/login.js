// @ts-check
// Signing in: the token typed into the form, kept in this browser, or carried by a link (#token=...), which asks
// first before it moves this browser to another tenant; a link pasted into the tab acts as if opened afresh.
import { Api, newKey } from "./api.js";
import { $, hashParams, setHash, showError, state } from "./page.js";
import { openSession } from "./session.js";
import { pollSessions, refreshSessions } from "./sessions.js";

/** This tab's X-Brain-Client: the one who holds control of a session it took. Claimed once per page. */
export function clientId() {
  state.client ??= claimClientId();
  return state.client;
}

/**
 * The id is kept in sessionStorage, so that a reload keeps control of what the tab controlled. But Chrome copies
 * sessionStorage into a duplicated tab and into a window.open window while the tab it came from still runs with
 * the id: the two would act as one client. So a page leaving the tab (reload, navigation) marks the id released,
 * and the next page in the tab takes it only with that mark; a copy made from a running page has no mark and
 * makes its own id. (A tab restored after a crash, which never said pagehide, makes a new one too: control can be
 * taken again.)
 */
function claimClientId() {
  const kept = sessionStorage.getItem("brain.client");
  const released = kept && sessionStorage.getItem("brain.client.released") === kept;
  sessionStorage.removeItem("brain.client.released");
  const id = released ? kept : `web-${Math.random().toString(36).slice(2, 10)}`;
  sessionStorage.setItem("brain.client", id);
  window.addEventListener("pagehide", () => sessionStorage.setItem("brain.client.released", id));
  // Back from the back-forward cache: the page runs again with its id, which is not free for a copy to take.
  window.addEventListener("pageshow", (e) => {
    if (e.persisted) sessionStorage.removeItem("brain.client.released");
  });
  return id;
}

/** What the sign-in view says when the daemon no longer accepts the token this page used. */
const REFUSED =
  "The daemon no longer accepts this token (revoked or rotated). Sign in again with the link `brain token` prints, or paste the new token.";

/**
 * Back to sign-in when the daemon refuses the signed-in token (401 to any call or the stream): retrying with it
 * cannot work, so the stream and the list's refresh loop end, the kept token is forgotten, and what the tenant's
 * page showed goes with it (the next one to sign in on this browser does not read it). Once per token: the
 * refusals of the calls that were on their way with it come later, and a token signed in with since is not theirs.
 */
function signOut(api) {
  if (state.api !== api) return;
  leaveTenant();
  // Another tab of this browser may have kept a newer token meanwhile: that one stays.
  if (localStorage.getItem("brain.token") === api.token) localStorage.removeItem("brain.token");
  $("main").hidden = true;
  $("login").hidden = false;
  showError("login-error", new Error(REFUSED));
  $("login-token").focus();
}

/**
 * Ends what the signed-in token's page holds: its session's stream, the list's refresh loop, and what it shows.
 */
function leaveTenant() {
  state.stream?.stop();
  Object.assign(state, {
    api: undefined,
    stream: undefined,
    poll: undefined,
    session: undefined,
    view: undefined,
    transcript: undefined,
    sessions: [],
    drafts: new Map(),
    images: new Map(),
  });
  // What was typed (and picked) for that tenant's sessions is not the next one's to read, nor to send.
  $("prompt").value = "";
  $("images").value = "";
  $("sessions").replaceChildren();
  $("transcript").replaceChildren();
  $("announce").textContent = "";
  $("session").hidden = true;
  $("empty").hidden = false;
  showTenant(undefined);
  $("sign-out").hidden = true;
  $("login-token").value = "";
  $("conn").textContent = "idle";
  $("conn").dataset.state = "idle";
}

/**
 * Signing in with the token this browser kept failed: a token refused (401) is forgotten, and the page says why
 * in words, not the daemon's code.
 */
export function keptTokenFailed(token, err) {
  if (err?.status !== 401) return showError("login-error", err);
  if (localStorage.getItem("brain.token") === token) localStorage.removeItem("brain.token");
  showError("login-error", new Error(REFUSED));
}

/**
 * Names the tenant signed in (`who`, its /v1/whoami) in the header, plainly, and in the window's title: a link
 * may have signed this browser in, and what is typed goes to that tenant. Nothing when signed out.
 */
function showTenant(who) {
  if (!who) {
    $("who").replaceChildren();
    document.title = "Brain";
    return;
  }
  const name = who.auth ? who.tenant : "no auth (loopback)";
  const tenant = Object.assign(document.createElement("strong"), { id: "tenant", textContent: name });
  $("who").replaceChildren(...(who.auth ? ["tenant ", tenant, ` · ${who.role}`] : [tenant]));
  document.title = `${name} · Brain`;
}

/** `who`: the token's /v1/whoami when the caller has asked already. */
export async function signIn(token, who) {
  const api = new Api(token, clientId(), signOut);
  who ??= await api.call("GET", "/v1/whoami");
  // Signed in already with another token (a link of another tenant's, confirmed): the session it had open, still
  // followed with that token, is not this one's to show, nor to send this one's prompts and answers to.
  if (state.api && state.api.token !== token) leaveTenant();
  state.api = api;
  showTenant(who);
  $("sign-out").hidden = false;
  // A token typed into the form stays out of the page once it is in use (the form shows again on sign-out).
  $("login-token").value = "";
  $("login").hidden = true;
  $("main").hidden = false;
  try {
    await signedIn(api);
  } catch (err) {
    // Refused on the way (signOut has said why and left): the step's own failure would only hide that.
    if (state.api === api) throw err;
  }
}

/**
 * What signing in with `api` fills the page with, a step at a time. The daemon may refuse the token while a step
 * waits (signOut, which takes `api` away): then the sign-in stops there, or it would go on without an API and
 * start the list's refresh loop again.
 */
async function signedIn(api) {
  const harnesses = (await api.call("GET", "/v1/harnesses")).harnesses;
  if (state.api !== api) return;
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
  if (state.api !== api) return;
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
  if (state.api !== api) return;
  pollSessions();
  const wanted = hashParams().get("session");
  if (wanted) await openSession(wanted);
}

/** Who a token signs in as (its /v1/whoami), in the words of the question a link asks. */
function signsInAs(who) {
  return who.auth ? `tenant ${who.tenant} (${who.role})` : "a daemon without auth";
}

/** Who the token this browser keeps signs in as, or why that cannot be said: the question names it all the same. */
async function keptSignsInAs(token) {
  try {
    return signsInAs(await new Api(token, clientId()).call("GET", "/v1/whoami"));
  } catch (err) {
    if (err?.status === 401) return "a token the daemon no longer accepts";
    return `a token whose tenant could not be read (${err?.message ?? err})`;
  }
}

/**
 * Signs in with the token a link carried (#token=...), and keeps it, once it works. A link is easy to send: when
 * this browser keeps another token, the page names the tenants of both and asks first, so a link holding another
 * tenant's token cannot quietly move this browser, and what is typed in it, to that tenant; anything but a yes
 * keeps the sign-in as it was. Whether it signed in.
 */
export async function signInFromLink(token) {
  const kept = localStorage.getItem("brain.token");
  const other = kept && kept !== token;
  const [who, keptAs] = await Promise.all([
    new Api(token, clientId()).call("GET", "/v1/whoami"),
    other ? keptSignsInAs(kept) : undefined,
  ]);
  if (other) {
    const question =
      `This link signs in as ${signsInAs(who)}.\nThis browser is signed in as ${keptAs}.\n\n` +
      "Switch to the link's sign-in? What you type afterwards goes to its tenant. Cancel keeps the sign-in as it is.";
    if (!confirm(question)) return false;
  }
  localStorage.setItem("brain.token", token);
  await signIn(token, who);
  return true;
}

/** A link pasted into this tab (#token=..., #session=...) acts as if it were opened afresh. */
export async function onHashChange() {
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

/** The localStorage key whose setting tells this browser's other tabs that one of them signed out. */
const SIGNED_OUT = "brain.signed-out";

/**
 * Sign out: nothing of the tenant stays in this browser for its next user (a shared machine): not the token it
 * kept, which signed the next visit in by itself, not what the page showed, not the open session in the address.
 */
function signOutHere() {
  leave();
  localStorage.removeItem("brain.token");
  // Said to the other tabs of this browser (a storage event), which show what the forgotten token read: set and
  // taken away at once, so nothing stays.
  localStorage.setItem(SIGNED_OUT, newKey());
  localStorage.removeItem(SIGNED_OUT);
}

/** What signing out does to this tab's page. */
function leave() {
  leaveTenant();
  setHash(new URLSearchParams());
  $("main").hidden = true;
  $("login").hidden = false;
  showError("login-error");
  $("login-token").focus();
}

export function wireLogin() {
  $("sign-out").onclick = signOutHere;
  // Signed out in another tab of this browser: this one leaves as well (it is not told of its own setItem).
  window.addEventListener("storage", (e) => {
    if (e.key === SIGNED_OUT && e.newValue !== null && state.api) leave();
  });
  $("login-form").onsubmit = async (e) => {
    e.preventDefault();
    const token = $("login-token").value.trim();
    try {
      showError("login-error");
      await signIn(token);
      localStorage.setItem("brain.token", token);
    } catch (err) {
      showError("login-error", err);
    }
  };
}

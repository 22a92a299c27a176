// @ts-check
// Brain's web UI: the sessions of your tenant with their status, and one session's live transcript with the
// controls to prompt, steer, interrupt, answer requests, checkpoint, fork, close and delete, and its checkpoints
// to fork from or restore. The token comes from the
// link the daemon printed (#token=...) and is kept in this browser; the open session is in the URL
// (#session=...), so a reload comes back to it and rebuilds it from the log.

import { wireComposer } from "./composer.js";
import { wireControls } from "./controls.js";
import { keptTokenFailed, onHashChange, signIn, signInFromLink, wireLogin } from "./login.js";
import { $, hashParams, setHash, showError } from "./page.js";
import { wireList } from "./sessions.js";

async function start() {
  wireLogin();
  wireList();
  wireComposer();
  wireControls();
  window.addEventListener("hashchange", onHashChange);
  const params = hashParams();
  const fromLink = params.get("token");
  if (fromLink) {
    params.delete("token");
    setHash(params);
  }
  const token = localStorage.getItem("brain.token") ?? "";
  /** The token whose sign-in failed, when one did: the link's, or the one this browser kept. */
  let tried = fromLink;
  try {
    if (fromLink && (await signInFromLink(fromLink))) return;
    tried = token;
    await signIn(token);
  } catch (err) {
    $("login").hidden = false;
    if (tried && tried === token) keptTokenFailed(token, err);
    else if (tried) showError("login-error", err);
  }
}

start();

// The web UI's delete and checkpoints in a real browser: Delete asks first, a session others were forked from is
// deleted only when asked again (the page names them), and the page goes back to the list without it; a
// checkpoint of the list forks a new session that opens on the conversation it continues, or writes its files
// into a directory on the daemon's machine.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { BrainClient } from "../client/client.js";
import { collect, settled } from "../testing/http.js";
import { useTestBrowser } from "../testing/use-browser.js";
import { useTestDaemon } from "../testing/use-daemon.js";

const t = useTestDaemon();
const browser = useTestBrowser();

/** A page signed in on session `id`, shown once its head says it is idle. */
async function pageOn(id: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${t.url}/#token=${t.tokens.admin}&session=${id}`);
  await expect.poll(() => page.locator("#s-status").textContent()).toBe("idle");
  return page;
}

/** Runs one turn of `text` on session `id` to its end, then checkpoints it: the checkpoint's id. */
async function turnThenCheckpoint(client: BrainClient, id: string, text: string): Promise<string> {
  const { turn } = await client.prompt(id, text);
  await collect(client, id, settled(turn));
  return (await client.checkpoint(id)).id;
}

const listed = (page: Page, id: string) => page.locator(`#sessions li[data-session="${id}"]`).count();
const transcriptText = async (page: Page) => (await page.locator("#transcript").textContent()) ?? "";

describe("web UI's Delete", () => {
  it("deletes the open session once confirmed, and goes back to the list without it", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const page = await pageOn(id);
    try {
      await expect.poll(() => listed(page, id)).toBe(1);
      await page.click("#delete");
      expect(await page.locator("#delete-text").textContent()).toContain(`Delete session ${id}`);
      await page.click("#delete-no"); // kept: nothing sent
      expect(await page.locator("#delete-confirm").isHidden()).toBe(true);
      expect((await client.session(id)).id).toBe(id);
      await page.click("#delete");
      await page.click("#delete-yes");
      await page.locator("#empty").waitFor();
      expect(await page.locator("#session").isHidden()).toBe(true);
      expect(page.url()).not.toContain("session=");
      await expect.poll(() => listed(page, id)).toBe(0);
      await expect(client.session(id)).rejects.toMatchObject({ status: 404 });
      expect(await page.locator("#s-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });

  it("names the sessions forked from it, and deletes it only when asked again", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    await client.checkpoint(id);
    const fork = (await client.fork(id)).id;
    const page = await pageOn(id);
    try {
      await page.click("#delete");
      await page.click("#delete-yes");
      const text = page.locator("#delete-text");
      await expect.poll(() => text.textContent()).toContain("Not deleted");
      expect(await text.textContent()).toContain(fork);
      // In the page's terms: the button that deletes it anyway, not the API call.
      expect(await text.textContent()).toContain(
        "delete it anyway with the Delete anyway button, and they lose",
      );
      expect(await text.textContent()).not.toContain("force=true");
      expect(await page.locator("#delete-yes").textContent()).toBe("Delete anyway");
      expect(await page.locator("#s-title").textContent()).toBe(id); // still on its page
      expect((await client.session(id)).id).toBe(id);
      await page.click("#delete-yes");
      await page.locator("#empty").waitFor();
      await expect(client.session(id)).rejects.toMatchObject({ status: 404 });
      await expect.poll(() => listed(page, id)).toBe(0);
      expect((await client.session(fork)).forked_from?.session).toBe(id); // the fork stays
      // Its history went with the session it came from: its page says so, instead of showing none without a word.
      await page.goto(`${t.url}/#session=${fork}`);
      await expect
        .poll(() => page.locator(`#transcript [data-inherited="${id}"]`).textContent())
        .toMatch(
          new RegExp(`^The history from session ${id} up to its checkpoint \\S+ is not shown \\(.*${id}`),
        );
      expect(await page.locator("#transcript .open-origin").count()).toBe(0); // nothing to open
    } finally {
      await page.close();
    }
  });

  it("says in the error line that the delete failed, naming the session, when the daemon refuses it", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const page = await pageOn(id);
    try {
      // Deleted by another client meanwhile: the page's delete gets a 404.
      await client.delete(id);
      await page.click("#delete");
      await page.click("#delete-yes");
      await expect
        .poll(() => page.locator("#s-error").textContent())
        .toMatch(new RegExp(`^Deleting session ${id} failed: .*${id}`));
    } finally {
      await page.close();
    }
  });
});

describe("web UI's checkpoints", () => {
  it("forks a new session from a checkpoint of the list, opened on the conversation up to it", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const first = await turnThenCheckpoint(client, id, "the first words");
    const second = await turnThenCheckpoint(client, id, "words after the first checkpoint");
    const page = await pageOn(id);
    try {
      const rows = page.locator("#checkpoint-list li");
      await expect
        .poll(() => rows.evaluateAll((li) => li.map((l) => l.getAttribute("data-checkpoint"))))
        .toEqual([first, second]);
      expect(await page.locator("#checkpoints-count").textContent()).toBe("Checkpoints (2)");
      await page.click("#checkpoints-count"); // opens the list
      await rows.first().getByRole("button", { name: "Fork from here" }).click();
      await expect.poll(() => page.locator("#s-title").textContent()).not.toBe(id);
      const fork = (await page.locator("#s-title").textContent()) ?? "";
      expect((await client.session(fork)).forked_from).toEqual({ session: id, checkpoint: first });
      await expect.poll(() => listed(page, fork)).toBe(1);
      await expect.poll(() => transcriptText(page)).toContain(`forked from ${id}`);
      const shown = await transcriptText(page);
      expect(shown).toContain(`From session ${id}, up to its checkpoint ${first}:`);
      expect(shown).toContain("the first words");
      expect(shown).not.toContain("words after the first checkpoint");
      // The history above, the fork's own events below it.
      expect(shown.indexOf("the first words")).toBeLessThan(shown.indexOf(`forked from ${id}`));
      // The fork's own checkpoints only: its parent's, in the history shown, are not its.
      expect(await page.locator("#checkpoint-list li").count()).toBe(0);
      expect(await page.locator("#s-error").textContent()).toBe("");
    } finally {
      await page.close();
    }
  });

  it("restores a checkpoint's files into a directory, and names what failed when the directory is refused", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const checkpoint = await turnThenCheckpoint(client, id, "kept in the files");
    const page = await pageOn(id);
    const dirs = [
      mkdtempSync(join(tmpdir(), "brain-web-full-")),
      mkdtempSync(join(tmpdir(), "brain-web-restore-")),
    ];
    try {
      const row = page.locator(`#checkpoint-list li[data-checkpoint="${checkpoint}"]`);
      await page.click("#checkpoints-count");
      await row.getByRole("button", { name: "Restore files…" }).click();
      const full = dirs[0]!;
      writeFileSync(join(full, "mine.txt"), "not to be overwritten");
      await row.locator("input.restore-into").fill(full);
      await row.getByRole("button", { name: "Write files" }).click();
      await expect
        .poll(() => page.locator("#s-error").textContent())
        .toMatch(new RegExp(`^Restoring checkpoint ${checkpoint} of session ${id} into ${full} failed: `));
      expect(readdirSync(full)).toEqual(["mine.txt"]);
      const into = join(dirs[1]!, "copy");
      await row.locator("input.restore-into").fill(into);
      await row.getByRole("button", { name: "Write files" }).click();
      await expect.poll(() => row.locator(".restored").textContent()).toBe(`restored into ${into}`);
      expect(readdirSync(into).length).toBeGreaterThan(0);
      expect(await page.locator("#s-error").textContent()).toBe("");
    } finally {
      await page.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it("opens a handoff on the conversation it continues, up to the event it was handed off at", async () => {
    const client = t.client();
    const { id } = await client.create({ harness: "echo" });
    const { turn } = await client.prompt(id, "said before the handoff");
    await collect(client, id, settled(turn));
    const handoff = await client.handoff(id, "echo");
    const seq = handoff.handoff_from?.seq;
    const later = await client.prompt(id, "said after the handoff");
    await collect(client, id, settled(later.turn));
    const page = await pageOn(handoff.id);
    try {
      const note = page.locator(`#transcript [data-inherited="${id}"]`);
      await expect.poll(() => note.textContent()).toBe(`From session ${id}, up to its event ${seq}: Open it`);
      const shown = await transcriptText(page);
      expect(shown).toContain("said before the handoff");
      expect(shown).not.toContain("said after the handoff");
      await note.getByRole("button", { name: "Open it" }).click();
      await expect.poll(() => page.locator("#s-title").textContent()).toBe(id);
      await expect.poll(() => transcriptText(page)).toContain("said after the handoff");
    } finally {
      await page.close();
    }
  });
});

/**
 * Issue 32, in Chromium: the info panel exports the channel's whole decrypted history as a file, with
 * core's exporter (the same code as `wsync export`): every message of a history longer than the
 * first page, its author, signed time and verification state, in JSON, HTML (text escaped, scripts
 * forbidden by its CSP) and text.
 */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { MemoryStore, WsyncClient } from "../../core/client/index.ts";
import { createInDialog, openChannel, signUp, WAIT } from "./chat.ts";
import { browserTest, e2eServer, PASSWORD } from "./harness.ts";

const t = e2eServer();
const rnd = () => Math.random().toString(36).slice(2, 7);

/** Exports in one format from the info panel; the downloaded file's name and contents. */
async function exportAs(
  page: Page,
  format: "json" | "html" | "txt",
): Promise<{ name: string; text: string }> {
  const box = page.locator('[data-testid="channel-export"]');
  await box.getByRole("combobox", { name: "Format" }).selectOption(format);
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: WAIT * 2 }),
    box.getByRole("button", { name: "EXPORT_HISTORY" }).click(),
  ]);
  await box.getByRole("status").filter({ hasText: "Saved" }).waitFor({ timeout: WAIT });
  const path = await download.path();
  return { name: download.suggestedFilename(), text: readFileSync(path, "utf8") };
}

browserTest(
  "the info panel exports the whole decrypted history as JSON, HTML and text",
  async () => {
    const alice = await signUp(t.url, "alice");
    const room = `exp${rnd()}`;
    const dialog = await createInDialog(alice.page, room, "public");
    await dialog.waitFor({ state: "detached" });
    await openChannel(alice.page, room);
    const channelId = decodeURIComponent(new URL(alice.page.url()).pathname.split("/").pop() as string);

    // Someone else writes 120 messages (the board opens a channel on its newest 50), markup in the first.
    const w = new WsyncClient({
      baseUrl: t.url,
      fetch: (input, init) => fetch(input, init),
      WebSocket: WebSocket as never,
      store: new MemoryStore(),
    });
    const handle = `wr${rnd()}`;
    await w.register({ handle, email: `${handle}@example.com`, password: PASSWORD });
    await w.completeRegistration();
    await w.join(channelId);
    const texts = ["<script>alert(1)</script> & café", ...Array.from({ length: 119 }, (_, i) => `line ${i}`)];
    for (const text of texts) await w.send(channelId, text);
    const did = w.state.auth.user?.did as string;
    w.disconnect();
    // After a reload the board holds only the newest page: the export must read the older ones.
    await alice.page.reload();
    await alice.page
      .locator(".chat-list .msg .text", { hasText: "line 118" })
      .first()
      .waitFor({ timeout: WAIT });
    expect(await alice.page.locator(".chat-list .msg .text", { hasText: "alert(1)" }).count()).toBe(0);

    const json = await exportAs(alice.page, "json");
    expect(json.name).toMatch(new RegExp(`^${room}-\\d{4}-\\d{2}-\\d{2}\\.json$`));
    const doc = JSON.parse(json.text) as {
      format: string;
      channel: { id: string; name: string };
      exportedBy: { handle: string };
      warnings: unknown[];
      items: {
        kind: string;
        author: { did: string; handle: string };
        signedAt: string | null;
        shownText: string | null;
        verification: string;
      }[];
    };
    expect(doc.format).toBe("wsync-export/1");
    expect(doc.channel).toEqual({ id: channelId, name: room });
    expect(doc.exportedBy.handle).toStartWith(alice.handle);
    expect(Array.isArray(doc.warnings)).toBe(true);
    const theirs = doc.items.filter((i) => i.kind === "message" && i.author.did === did);
    // Every message, oldest first, as signed and verified on this device.
    expect(theirs.map((i) => i.shownText)).toEqual(texts);
    for (const i of theirs) {
      expect(i.verification).toBe("verified");
      expect(Number.isNaN(Date.parse(i.signedAt ?? ""))).toBe(false);
    }

    const html = await exportAs(alice.page, "html");
    expect(html.name).toEndWith(".html");
    expect(html.text).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(html.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; café");
    expect(html.text).not.toContain("<script>");
    expect(html.text).toContain('title="verified"');
    expect(html.text).toContain("line 118");

    const txt = await exportAs(alice.page, "txt");
    expect(txt.name).toEndWith(".txt");
    expect(txt.text).toStartWith(`# #${room} (${channelId}) on ${t.url}`);
    // A row per message, with its mark: ✓ verified.
    const lines = txt.text.split("\n");
    for (const text of texts) expect(lines.filter((l) => l.endsWith(` ✓ ${text}`)).length).toBe(1);
    expect(alice.errors).toEqual([]);
    await alice.context.close();
  },
  180_000,
);

/**
 * Encrypted files and images in real Chromium (issue 31): Alice drops a photo carrying a GPS EXIF tag;
 * Bob sees its ThumbHash placeholder and decrypted thumbnail, opens the full image and downloads it,
 * and the bytes he gets carry no EXIF (the browser re-encoded it through a canvas). Ticking "original"
 * keeps the tag (so the check below is known to see one). Other files are a card whose download
 * decrypts to the same bytes, and a 200 MB file is refused with the server's limit named.
 */
import { expect } from "bun:test";
import { readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import {
  createInDialog,
  messageRow,
  openChannel,
  type Someone,
  sidebarChannel,
  signUp,
  WAIT,
} from "./chat.ts";
import { browserTest, e2eServer, shot } from "./harness.ts";
import { gradientJpeg, hasExif, hasGpsTag, jpegSize, withGpsExif } from "./jpeg-exif.ts";

const t = e2eServer();

/** Drops a file on the open channel's message list, as a drag from the desktop does. */
async function dropFile(page: Page, bytes: Uint8Array, name: string, type: string): Promise<void> {
  await page.evaluate(
    ({ b64, name, type }) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([data], name, { type }));
      const target = document.querySelector(".chat-list") as HTMLElement;
      for (const kind of ["dragenter", "dragover", "drop"])
        target.dispatchEvent(new DragEvent(kind, { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { b64: Buffer.from(bytes).toString("base64"), name, type },
  );
}

/** Pastes a file into the message input, as Ctrl+V of a copied image does. */
async function pasteFile(page: Page, bytes: Uint8Array, name: string, type: string): Promise<void> {
  await page.evaluate(
    ({ b64, name, type }) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([data], name, { type }));
      const box = document.querySelector('textarea[aria-label="Message"]') as HTMLElement;
      box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    },
    { b64: Buffer.from(bytes).toString("base64"), name, type },
  );
}

/** Sends what the panel holds, with a caption (the row is found by it). */
async function sendPanel(page: Page, caption: string, original = false): Promise<void> {
  const panel = page.getByTestId("file-send");
  await panel.getByRole("textbox", { name: "Caption" }).fill(caption);
  if (original) await panel.getByRole("checkbox").check();
  await panel.getByRole("button", { name: "Send" }).click();
  await panel.waitFor({ state: "detached", timeout: WAIT });
}

/** Bob's downloaded full image of the row captioned `caption`, after seeing its thumbnail. */
async function openFullImage(bob: Someone, caption: string): Promise<Uint8Array> {
  const row = messageRow(bob.page, caption);
  await row.waitFor({ timeout: WAIT });
  expect(await row.locator(".mark").textContent()).toBe("✓");
  const image = row.locator(".file-image");
  // The placeholder (a ThumbHash from the signed message) is drawn under the thumbnail.
  expect(await image.getAttribute("data-placeholder")).toBe("thumbhash");
  expect(await image.evaluate((el) => getComputedStyle(el).backgroundImage)).toContain("data:image/png");
  // The thumbnail, decrypted in the browser: 320 px on its longer side.
  const thumb = row.locator("img.file-thumb");
  await thumb.waitFor({ timeout: WAIT });
  await bob.page.waitForFunction(
    (el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0,
    await thumb.elementHandle(),
    { timeout: WAIT },
  );
  expect(await thumb.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(320);
  expect(await thumb.getAttribute("src")).toStartWith("blob:");
  await image.click();
  const viewer = bob.page.getByRole("dialog");
  const full = viewer.locator("img.file-full");
  await full.waitFor({ timeout: WAIT });
  await bob.page.waitForFunction(
    (el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0,
    await full.elementHandle(),
    { timeout: WAIT },
  );
  expect(await full.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(800);
  const [download] = await Promise.all([
    bob.page.waitForEvent("download", { timeout: WAIT }),
    viewer.getByRole("link", { name: "Download" }).click(),
  ]);
  expect(download.suggestedFilename()).toBe("harbour.jpg");
  const bytes = new Uint8Array(readFileSync(await download.path()));
  const url = await full.getAttribute("src");
  await viewer.getByRole("button", { name: "Close" }).click();
  await viewer.waitFor({ state: "detached" });
  // The full image's blob: URL is revoked when the viewer closes (an image no longer loads from it;
  // the page's CSP allows images from blob: URLs, not fetches).
  const loads = (u: string | null) =>
    bob.page.evaluate(
      (src) =>
        new Promise<string>((resolve) => {
          const img = new Image();
          img.onload = () => resolve("open");
          img.onerror = () => resolve("revoked");
          img.src = src as string;
        }),
      u,
    );
  expect(await loads(await row.locator("img.file-thumb").getAttribute("src"))).toBe("open");
  expect(await loads(url)).toBe("revoked");
  return bytes;
}

browserTest(
  "a dropped photo: the other member sees its thumbnail, opens it, and its bytes carry no GPS tag",
  async () => {
    const photo = withGpsExif(gradientJpeg(800, 600));
    // The test image does carry the tag the browser must drop.
    expect(hasGpsTag(photo)).toBe(true);

    const alice = await signUp(t.url, "alice");
    const bob = await signUp(t.url, "bob");
    const room = `files${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(alice.page, room, "public");
    await sidebarChannel(alice.page, room).waitFor();
    if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
    await bob.page.reload();
    await openChannel(bob.page, room);
    await openChannel(alice.page, room);

    // Dropped on the board: re-encoded (the default).
    await dropFile(alice.page, photo, "harbour.jpg", "image/jpeg");
    const panel = alice.page.getByTestId("file-send");
    await panel.getByText("harbour.jpg").waitFor();
    expect(await panel.getByRole("checkbox").isChecked()).toBe(false);
    await sendPanel(alice.page, "the harbour");
    await messageRow(alice.page, "the harbour").locator("img.file-thumb").waitFor({ timeout: WAIT });
    const clean = await openFullImage(bob, "the harbour");
    expect(jpegSize(clean)).toEqual({ width: 800, height: 600 });
    expect(hasExif(clean)).toBe(false);
    expect(hasGpsTag(clean)).toBe(false);
    await shot(bob.page, "files-thumbnail");

    // Pasted, with "original" ticked: the very bytes go, tag and all.
    await pasteFile(alice.page, photo, "harbour.jpg", "image/jpeg");
    await sendPanel(alice.page, "the original", true);
    const kept = await openFullImage(bob, "the original");
    expect(hasGpsTag(kept)).toBe(true);
    expect(Buffer.from(kept).equals(Buffer.from(photo))).toBe(true);

    // Another file: a card with its name and size; the download decrypts to the same bytes.
    const notes = new TextEncoder().encode("minutes of the harbour meeting\n".repeat(3000));
    await alice.page.locator('.composer input[type="file"]').setInputFiles({
      name: "minutes.txt",
      mimeType: "text/plain",
      buffer: Buffer.from(notes),
    });
    await sendPanel(alice.page, "the minutes");
    const card = messageRow(bob.page, "the minutes").locator(".file-card");
    await card.waitFor({ timeout: WAIT });
    expect(await card.locator(".file-name").textContent()).toBe("minutes.txt");
    expect(await card.locator(".file-size").textContent()).toBe("91 KB");
    const [download] = await Promise.all([
      bob.page.waitForEvent("download", { timeout: WAIT }),
      card.getByRole("button", { name: "Download minutes.txt" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("minutes.txt");
    expect(Buffer.from(readFileSync(await download.path())).equals(Buffer.from(notes))).toBe(true);

    // 200 MB through the paperclip: refused by the server, its limit named; nothing is sent.
    const big = join(tmpdir(), `wsync-200mb-${process.pid}.bin`);
    writeFileSync(big, "");
    truncateSync(big, 200 * 1024 * 1024); // sparse: nothing is written to disk
    try {
      await alice.page.locator('.composer input[type="file"]').setInputFiles(big);
      const refused = alice.page.getByTestId("file-send");
      await refused.getByRole("button", { name: "Send" }).click();
      await refused.getByRole("alert").filter({ hasText: "File is larger than the 25 MB limit" }).waitFor({
        timeout: WAIT,
      });
      await shot(alice.page, "files-too-large");
      await refused.getByRole("button", { name: "Close" }).click();
      await refused.waitFor({ state: "detached" });
    } finally {
      rmSync(big, { force: true });
    }
    expect(alice.errors).toEqual([]);
    expect(bob.errors).toEqual([]);
  },
  180_000,
);

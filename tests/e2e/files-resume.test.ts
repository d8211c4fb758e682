/**
 * A web upload that loses its connection (issue 31, "retry after a lost connection resumes"): in real
 * Chromium, Alice's chunk uploads fail as a dropped connection does after three went through, until
 * her browser asks the server which chunks it holds (the resumption); then it sends only the missing
 * ones under the same blob, and Bob downloads exactly the file.
 */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { FILE_CIPHER_CHUNK, fileChunkCount } from "../../core/crypto/file-cipher.ts";
import { CHUNKS_PER_PUT_MAX } from "../../core/protocol/blob-paths.ts";
import { createInDialog, messageRow, openChannel, sidebarChannel, signUp, WAIT } from "./chat.ts";
import { browserTest, e2eServer } from "./harness.ts";

const t = e2eServer();

browserTest(
  "a web upload cut off mid-way resumes under the same blob and the other member gets the same bytes",
  async () => {
    const alice = await signUp(t.url, "alice");
    const bob = await signUp(t.url, "bob");
    const room = `resume${Math.random().toString(36).slice(2, 7)}`;
    const dialog = await createInDialog(alice.page, room, "public");
    await sidebarChannel(alice.page, room).waitFor();
    if (await dialog.isVisible()) await dialog.getByRole("button", { name: /Close|Cancel/ }).click();
    await bob.page.reload();
    await openChannel(bob.page, room);
    await openChannel(alice.page, room);

    let creates = 0;
    let statuses = 0;
    let delivered = 0;
    let dropped = 0;
    await alice.page.route(/\/api\/blobs(\/[0-9a-f]{32}(\/status|\/chunks\/\d+))?$/, async (route) => {
      const req = route.request();
      const path = new URL(req.url()).pathname;
      if (req.method() === "POST" && path === "/api/blobs") creates++;
      if (path.endsWith("/status")) statuses++;
      if (req.method() === "PUT") {
        // After three chunks the network is gone for chunk uploads until the browser resumes. A PUT
        // may carry several chunks (its length says how many).
        if (delivered >= 3 && statuses === 0) {
          dropped++;
          return route.abort("connectionreset");
        }
        const length = req.postDataBuffer()?.length ?? Number.NaN;
        expect(length % FILE_CIPHER_CHUNK).toBe(0);
        delivered += length / FILE_CIPHER_CHUNK;
      }
      return route.continue();
    });

    // More chunks than one PUT carries (the panel sends 16 per PUT), so the loss falls mid-file.
    const text = "the quarterly numbers, line by line\n".repeat(85_000);
    const bytes = new TextEncoder().encode(text);
    const chunks = fileChunkCount(bytes.length);
    expect(chunks).toBeGreaterThan(2 * CHUNKS_PER_PUT_MAX);
    await alice.page.locator('.composer input[type="file"]').setInputFiles({
      name: "numbers.txt",
      mimeType: "text/plain",
      buffer: Buffer.from(bytes),
    });
    const panel = alice.page.getByTestId("file-send");
    await panel.getByRole("textbox", { name: "Caption" }).fill("the numbers");
    await panel.getByRole("button", { name: "Send" }).click();
    await panel.waitFor({ state: "detached", timeout: 120_000 });

    expect(dropped).toBeGreaterThan(0);
    expect(statuses).toBe(1);
    expect(creates).toBe(1);
    // Every chunk reached the server once: none held before the loss was sent again.
    expect(delivered).toBe(chunks);

    const card = messageRow(bob.page, "the numbers").locator(".file-card");
    await card.waitFor({ timeout: WAIT });
    const [download] = await Promise.all([
      bob.page.waitForEvent("download", { timeout: WAIT }),
      card.getByRole("button", { name: "Download numbers.txt" }).click(),
    ]);
    expect(Buffer.from(readFileSync(await download.path())).equals(Buffer.from(bytes))).toBe(true);
    expect(bob.errors).toEqual([]);
  },
  180_000,
);

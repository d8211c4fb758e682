/**
 * The browser harness itself: a context whose close hangs gets this process's Chromium killed, the
 * file's other contexts then close without an error (they went with it), and the next profile runs
 * in a new Chromium. A stopped Chromium (SIGSTOP) stands in for one that never answers a close.
 */
import { afterAll, expect } from "bun:test";
import { spawnSync } from "node:child_process";
import { browserTest, closeBrowser, closing, newProfile } from "./harness.ts";

afterAll(closeBrowser);

browserTest(
  "a close that hangs kills Chromium; the other context's close is then done, and a new Chromium runs",
  async () => {
    const bound = closing.ms;
    closing.ms = 2_000;
    // What the harness says on stderr when it kills Chromium, kept here (CI lists such lines).
    const said: string[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => void said.push(args.join(" "));
    try {
      const a = await newProfile();
      const b = await newProfile();
      await a.page.setContent("<p>a</p>");
      await b.page.setContent("<p>b</p>");
      spawnSync("pkill", ["-STOP", "-P", String(process.pid), "chromium"]);
      const started = Date.now();
      await a.context.close();
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
      await b.context.close();
      expect(said).toEqual([
        "[e2e] Chromium did not close a context within 2000 ms: killed, a new one starts",
      ]);
      const c = await newProfile();
      await c.page.setContent("<p>c</p>");
      expect(await c.page.locator("p").textContent()).toBe("c");
      await c.context.close();
    } finally {
      console.error = error;
      closing.ms = bound;
    }
  },
);

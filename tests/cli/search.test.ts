/**
 * Issue 32: `wsync search` and `wsync export` against a real server, as a user runs them: the index
 * fills on receipt (read) and by --backfill (a message far past the first page), edits and deletions
 * update it, --channel and in: scope it, logout deletes it; export writes the decrypted history.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { signedInClient } from "../../cli/context.ts";
import { searchIndexPath } from "../../cli/search-index.ts";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, registerCli, tempDir } from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
let ops: string;

/** Sends many messages as `who` in this process (a subprocess per message would take minutes). */
async function sendMany(who: CliUser, channel: string, texts: string[]): Promise<void> {
  const saved = process.env.XDG_CONFIG_HOME;
  process.env.XDG_CONFIG_HOME = who.cli.configHome;
  try {
    const { client } = await signedInClient({ server: t.url });
    await client.open(channel);
    for (const text of texts) await client.send(channel, text);
    client.disconnect();
  } finally {
    process.env.XDG_CONFIG_HOME = saved;
  }
}

const hits = async (who: CliUser, args: string[]) =>
  JSON.parse(await who.cli.ok(["search", ...args, "--json"])) as {
    text: string;
    channel: string;
    seq: number;
    author: { handle: string };
    verified: boolean;
    edited: boolean;
    matches: [number, number][];
  }[];

beforeAll(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
  alice = await registerCli(t.url, "alice");
  bob = await registerCli(t.url, "bob");
  ops = (await alice.cli.ok(["create", "ops", "--type", "public"]))
    .trim()
    .split("\n")
    .pop()
    ?.trim() as string;
  await bob.cli.ok(["join", ops]);
  const dev = (await alice.cli.ok(["create", "dev", "--type", "public"]))
    .trim()
    .split("\n")
    .pop()
    ?.trim() as string;
  await bob.cli.ok(["join", dev]);
  // The needle is the oldest of 130 messages: three pages back from the newest.
  await sendMany(alice, ops, [
    "The Café reopens on Tuesday",
    ...Array.from({ length: 129 }, (_, i) => `filler ${i}`),
  ]);
  await sendMany(alice, dev, ["the café in dev"]);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  cleanupTempDirs();
});

describe("wsync search", () => {
  test("nothing indexed yet: says so; read fills it on receipt; --backfill finds a message pages back", async () => {
    const none = await bob.cli.run(["search", "cafe"]);
    expect(none.code).toBe(0);
    expect(none.stderr).toContain("wsync search --backfill");
    // `read` shows (and indexes) the newest 50: the needle is not among them.
    await bob.cli.ok(["read", "#ops"]);
    expect((await hits(bob, ["filler", "128"])).map((h) => h.text)).toEqual(["filler 128"]);
    expect(await hits(bob, ["cafe", "in:#ops"])).toEqual([]);
    const path = searchIndexPath(bob.cli.storeFile);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const r = await bob.cli.run(["search", "--backfill"]);
    expect(r.code).toBe(0);
    // Everything but the 50 `read` indexed already: 130 + 1 messages, less those 50.
    expect(r.stderr).toContain("Read 131 messages in 2 channels; 81 new in the search index");
    const found = await hits(bob, ["CAFE", "reop"]);
    expect(found.map((h) => [h.text, h.channel, h.author.handle, h.verified])).toEqual([
      ["The Café reopens on Tuesday", "ops", alice.handle, true],
    ]);
    const h = found[0] as (typeof found)[number];
    expect(h.matches.map(([s, e]) => h.text.slice(s, e))).toEqual(["Café", "reop"]);
    // The text form: channel, time, number, author, mark, text.
    expect(await bob.cli.ok(["search", "cafe", "reopens"])).toMatch(
      new RegExp(
        `^#ops \\[[-0-9: ]+\\] \\(${h.seq}\\) ${alice.handle.replaceAll(".", "\\.")} ✓: The Café reopens on Tuesday\\n$`,
      ),
    );
    // A second backfill stops at what the first covered: one page, nothing new.
    const again = await bob.cli.run(["search", "--backfill", "--channel", "#ops"]);
    expect(again.stderr).toContain("Read 50 messages in 1 channel; 0 new in the search index");
  }, 120_000);

  test("scoping: --channel, in:, --from", async () => {
    await bob.cli.ok(["search", "--backfill"]);
    expect((await hits(bob, ["café"])).map((h) => h.channel).sort()).toEqual(["dev", "ops"]);
    expect((await hits(bob, ["café", "--channel", "#dev"])).map((h) => h.text)).toEqual(["the café in dev"]);
    expect((await hits(bob, ["café", "in:#dev"])).map((h) => h.text)).toEqual(["the café in dev"]);
    expect(await hits(bob, ["café", "--from", "bob"])).toEqual([]);
    expect((await hits(bob, ["café", "--from", alice.handle])).length).toBe(2);
    const bad = await bob.cli.run(["search", "cafe", "before:yesterday"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("YYYY-MM-DD");
    expect((await bob.cli.run(["search", "cafe", "--channel", "#nowhere"])).code).toBe(4);
  }, 60_000);

  test("an edit and a deletion reach the index when read", async () => {
    const n = (
      JSON.parse(await alice.cli.ok(["send", "#dev", "ship the grommets", "--json"])) as { seq: number }
    ).seq;
    await bob.cli.ok(["read", "#dev"]);
    expect((await hits(bob, ["grommets"])).length).toBe(1);
    await alice.cli.ok(["edit", "#dev", String(n), "ship the sprockets"]);
    await bob.cli.ok(["read", "#dev"]);
    expect(await hits(bob, ["grommets"])).toEqual([]);
    expect((await hits(bob, ["sprock"])).map((h) => [h.text, h.edited])).toEqual([
      ["ship the sprockets", true],
    ]);
    await alice.cli.ok(["delete", "#dev", String(n)]);
    await bob.cli.ok(["read", "#dev"]);
    expect(await hits(bob, ["sprockets"])).toEqual([]);
  }, 60_000);

  test("--off deletes the index and stops filling it; --on again; logout deletes it", async () => {
    const path = searchIndexPath(bob.cli.storeFile);
    await bob.cli.ok(["search", "--off"]);
    expect(existsSync(path)).toBe(false);
    await bob.cli.ok(["read", "#ops"]);
    expect(existsSync(path)).toBe(false);
    expect((await bob.cli.run(["search", "cafe"])).code).toBe(2);
    await bob.cli.ok(["search", "--on"]);
    await bob.cli.ok(["read", "#ops"]);
    expect(existsSync(path)).toBe(true);
    await bob.cli.ok(["logout", "--yes"]);
    expect(existsSync(path)).toBe(false);
  }, 60_000);
});

describe("wsync export", () => {
  const XSS = `<script>alert("x")</script><img src=x onerror='alert(1)'> & "quotes"`;

  test("json, html and txt: the whole decrypted history with authors, signed times, verification", async () => {
    await sendMany(alice, ops, [XSS]);
    const dir = tempDir("wsync-export-");
    const json = join(dir, "ops.json");
    const r = await alice.cli.run(["export", "#ops", "--format", "json", "-o", json]);
    expect(r.code).toBe(0);
    expect(statSync(json).mode & 0o777).toBe(0o600);
    const doc = JSON.parse(readFileSync(json, "utf8")) as {
      channel: { id: string; name: string };
      exportedBy: { handle: string };
      warnings: unknown[];
      items: {
        kind: string;
        text: string | null;
        signedAt: string;
        verification: string;
        author: { handle: string };
      }[];
    };
    expect(doc.channel).toEqual({ id: ops, name: "ops" });
    expect(doc.exportedBy.handle).toBe(alice.handle);
    expect(Array.isArray(doc.warnings)).toBe(true);
    const messages = doc.items.filter((i) => i.kind === "message");
    // Every message, from the first (three pages back) to the last, decrypted and verified.
    expect(messages.map((m) => m.text)).toEqual([
      "The Café reopens on Tuesday",
      ...Array.from({ length: 129 }, (_, i) => `filler ${i}`),
      XSS,
    ]);
    for (const m of messages) {
      expect(m.verification).toBe("verified");
      expect(m.author.handle).toBe(alice.handle);
      expect(Number.isNaN(Date.parse(m.signedAt))).toBe(false);
    }

    const html = join(dir, "ops.html");
    await alice.cli.ok(["export", "#ops", "--format", "html", "-o", html]);
    const page = readFileSync(html, "utf8");
    expect(page).not.toContain("<script>");
    expect(page).not.toContain("<img");
    expect(page).toContain(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;alert(1)&#39;&gt; &amp;",
    );
    expect(page).toContain("default-src 'none'");
    expect(page).toContain("The Café reopens on Tuesday");
    expect(page.match(/class="v verified"/g)?.length).toBe(131);

    const txt = join(dir, "ops.txt");
    await alice.cli.ok(["export", "#ops", "--format", "txt", "-o", txt]);
    const lines = readFileSync(txt, "utf8");
    expect(lines).toContain(`# #ops (${ops})`);
    expect(lines).toMatch(new RegExp(`${alice.handle.replaceAll(".", "\\.")} ✓ The Café reopens on Tuesday`));
    expect(lines).toContain("filler 128");
  }, 120_000);

  test("an existing file is refused (exit 2, left alone) unless --force; a bad format is exit 2", async () => {
    const file = join(tempDir("wsync-export-"), "keep.txt");
    writeFileSync(file, "precious\n");
    const r = await alice.cli.run(["export", "#dev", "--format", "txt", "-o", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--force");
    expect(readFileSync(file, "utf8")).toBe("precious\n");
    await alice.cli.ok(["export", "#dev", "--format", "txt", "-o", file, "--force"]);
    expect(readFileSync(file, "utf8")).toContain("the café in dev");
    expect((await alice.cli.run(["export", "#dev", "--format", "pdf", "-o", `${file}.pdf`])).code).toBe(2);
    expect((await alice.cli.run(["export", "#dev", "--format", "txt"])).code).toBe(2);
  }, 60_000);
});

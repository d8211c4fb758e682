/**
 * Security warnings as they arise, through the real CLI: `tail` prints a warning the moment the
 * engine raises it (here: a member's key changes), as a `⚠` line or a `{"type":"warning"}` JSON line
 * in the same stream as the items, and `read` shows it afterwards.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, LineReader, registerCli } from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
let carol: CliUser;
let channelId: string;

beforeAll(async () => {
  t = await startTestServer();
  [alice, bob, carol] = await Promise.all([
    registerCli(t.url, "alice"),
    registerCli(t.url, "bob"),
    registerCli(t.url, "carol"),
  ]);
  channelId = (await alice.cli.ok(["create", "plaza", "--type", "public"])).trim();
  await bob.cli.ok(["join", channelId]);
  await carol.cli.ok(["join", channelId]);
  await alice.cli.ok(["send", channelId, "welcome"]);
  // Bob pins carol's key on first sight.
  await bob.cli.ok(["read", channelId]);
});
afterAll(async () => {
  await t.stop();
  cleanupTempDirs();
});

test("tail prints a key change as it arises; read shows it after", async () => {
  const json = bob.cli.spawn(["tail", channelId, "--json"]);
  const human = bob.cli.spawn(["tail", channelId]);
  try {
    const jsonOut = new LineReader(json.stdout);
    const humanOut = new LineReader(human.stdout);
    await new LineReader(json.stderr).waitFor((l) => l.startsWith("Following"), 15_000, "tail --json");
    await new LineReader(human.stderr).waitFor((l) => l.startsWith("Following"), 15_000, "tail");
    // Nothing to warn about yet.
    expect(jsonOut.lines.filter((l) => l.includes('"type":"warning"'))).toEqual([]);

    await carol.cli.ok(["keys", "new", "--yes"]);

    const line = await jsonOut.waitFor((l) => l.includes('"type":"warning"'), 15_000, "the warning line");
    const warning = JSON.parse(line);
    expect(Object.keys(warning).sort()).toEqual([
      "channelId",
      "check",
      "did",
      "epochNumber",
      "handle",
      "text",
      "type",
    ]);
    expect(warning).toMatchObject({ type: "warning", check: "key-changed", channelId, did: carol.did });
    // Protocol §8: the server says carol reset her key; her own key-change commit is still to come.
    expect(warning.text).toContain("reset their key");
    const text = await humanOut.waitFor((l) => l.startsWith("⚠ "), 15_000, "the ⚠ line");
    expect(text).toBe(`⚠ ${warning.text}`);
    // Every stdout line of --json is one JSON object, and the warning is printed once.
    for (const l of jsonOut.lines) expect(() => JSON.parse(l)).not.toThrow();
    await Bun.sleep(300);
    expect(jsonOut.lines.filter((l) => l.includes('"type":"warning"'))).toHaveLength(1);

    json.kill("SIGINT");
    human.kill("SIGINT");
    expect(await json.exited).toBe(0);
    expect(await human.exited).toBe(0);

    const read = await bob.cli.ok(["read", channelId]);
    expect(read).toContain(`⚠ ${warning.text}`);
    const items = JSON.parse(await bob.cli.ok(["read", channelId, "--json"])) as Record<string, unknown>[];
    expect(items.filter((o) => o.type === "warning")).toEqual([warning]);
  } finally {
    json.kill("SIGKILL");
    human.kill("SIGKILL");
  }
});

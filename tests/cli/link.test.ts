/**
 * Secret links and protocol v2 refusals through the real CLI: `link show` and `link rotate` as
 * subprocesses against a real server, each person on their own device (config directory). The tests
 * run in order and share the accounts and the channel.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { Cli, type CliUser, cleanupTempDirs, registerCli } from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
let carol: CliUser;
let channelId: string;
let firstLink: string;
let secondLink: string;

const LINK = /^http:\/\/\S+\/sync\/join\/([a-z2-7]{16})#\S+$/;

beforeAll(async () => {
  t = await startTestServer();
  [alice, bob, carol] = await Promise.all([
    registerCli(t.url, "alice"),
    registerCli(t.url, "bob"),
    registerCli(t.url, "carol"),
  ]);
  firstLink = (await alice.cli.ok(["create", "vault", "--type", "secret"])).trim();
  channelId = LINK.exec(firstLink)?.[1] as string;
  await bob.cli.ok(["join", firstLink]);
});
afterAll(async () => {
  await t.stop();
  cleanupTempDirs();
});

/** Exactly one line on stderr, `wsync: …` (the CLI's error contract). */
function oneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("wsync: ");
  return lines[0] as string;
}

describe("link show", () => {
  test("members see the link the channel was created with; --json has channelId, name, link", async () => {
    expect(firstLink).toMatch(LINK);
    expect((await alice.cli.ok(["link", "show", "#vault"])).trim()).toBe(firstLink);
    expect((await bob.cli.ok(["link", "show", channelId])).trim()).toBe(firstLink);
    const json = JSON.parse(await alice.cli.ok(["link", "show", "#vault", "--json"]));
    expect(json).toEqual({ channelId, name: "vault", link: firstLink });
  });

  test("not a member: exit 4; a public channel: exit 2; not signed in: exit 3", async () => {
    const outsider = await carol.cli.run(["link", "show", channelId]);
    expect(outsider.code).toBe(4);
    expect(oneErrorLine(outsider.stderr)).not.toContain("#");
    const byName = await carol.cli.run(["link", "show", "#vault"]);
    expect(byName.code).toBe(4);
    oneErrorLine(byName.stderr);

    const lobby = (await alice.cli.ok(["create", "lobby", "--type", "public"])).trim();
    const pub = await alice.cli.run(["link", "show", lobby]);
    expect(pub.code).toBe(2);
    expect(oneErrorLine(pub.stderr)).toContain(
      "#lobby is a public channel: only secret channels have a link",
    );

    const unknown = await alice.cli.run(["link", "show", "aaaaaaaaaaaaaaaa"]);
    expect(unknown.code).toBe(4);
    const nobody = await new Cli(t.url).run(["link", "show", channelId]);
    expect(nobody.code).toBe(3);
  });
});

describe("link rotate", () => {
  test("a member who is not the owner is refused, and the link stays the same", async () => {
    const r = await bob.cli.run(["link", "rotate", "#vault"]);
    expect(r.code).toBe(2);
    expect(oneErrorLine(r.stderr)).toBe("wsync: Only the owner of #vault can rotate its link");
    expect(r.stdout).toBe("");
    expect((await alice.cli.ok(["link", "show", "#vault"])).trim()).toBe(firstLink);
  });

  test("the owner gets a new link; every member sees it; the old one no longer joins", async () => {
    const r = await alice.cli.run(["link", "rotate", "#vault"]);
    expect(r.code).toBe(0);
    secondLink = r.stdout.trim();
    expect(secondLink).toMatch(LINK);
    expect(secondLink).not.toBe(firstLink);
    expect(LINK.exec(secondLink)?.[1]).toBe(channelId);
    expect(r.stderr).toContain("The old link no longer works");
    expect((await alice.cli.ok(["link", "show", "#vault"])).trim()).toBe(secondLink);
    // Bob learns it from the sealed state of the new signed epoch, not from the server.
    expect((await bob.cli.ok(["link", "show", "#vault"])).trim()).toBe(secondLink);

    const stale = await carol.cli.run(["join", firstLink]);
    expect(stale.code).not.toBe(0);
    oneErrorLine(stale.stderr);
    expect(await carol.cli.ok(["join", secondLink])).toBe(`Joined #vault (${channelId})\n`);
    expect((await carol.cli.ok(["link", "show", "#vault"])).trim()).toBe(secondLink);
  });

  test("--json prints the new link in the show shape", async () => {
    const json = JSON.parse(await alice.cli.ok(["link", "rotate", channelId, "--json"]));
    expect(Object.keys(json).sort()).toEqual(["channelId", "link", "name"]);
    expect(json.channelId).toBe(channelId);
    expect(json.link).toMatch(LINK);
    expect(json.link).not.toBe(secondLink);
    secondLink = json.link;
  });
});

describe("a channel whose server rolled it back", () => {
  test("send exits 6 with the rollback warning; read shows it; --json carries the check", async () => {
    // Everyone has seen the newest epoch; then the server forgets it (a rollback to the one before).
    await alice.cli.ok(["send", "#vault", "before the rollback"]);
    await bob.cli.ok(["read", "#vault"]);
    const db = new Database(t.config.sqlitePath);
    try {
      const { n } = db
        .query("SELECT max(epoch_number) AS n FROM epochs WHERE channel_id = ?")
        .get(channelId) as { n: number };
      db.run("DELETE FROM epoch_keys WHERE channel_id = ? AND epoch_number = ?", [channelId, n]);
      db.run("DELETE FROM epochs WHERE channel_id = ? AND epoch_number = ?", [channelId, n]);
    } finally {
      db.close();
    }

    const sent = await bob.cli.run(["send", "#vault", "after the rollback"]);
    expect(sent.code).toBe(6);
    const line = oneErrorLine(sent.stderr);
    expect(line).toContain("rollback");
    expect(sent.stdout).toBe("");

    const human = await bob.cli.ok(["read", "#vault"]);
    expect(human).toContain(`⚠ ${line.slice("wsync: ".length)}`);
    expect(human).toContain("⚠ Messages in this channel are not being sent");
    const json = JSON.parse(await bob.cli.ok(["read", "#vault", "--json"])) as Record<string, unknown>[];
    const warning = json.find((o) => o.type === "warning" && o.check === "rollback");
    expect(warning).toMatchObject({ channelId, text: line.slice("wsync: ".length) });
    expect(json.filter((o) => o.type !== "warning").some((o) => o.text === "before the rollback")).toBe(true);

    const rotate = await alice.cli.run(["link", "rotate", "#vault"]);
    expect(rotate.code).toBe(6);
    oneErrorLine(rotate.stderr);
  });
});

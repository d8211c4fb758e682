/**
 * `wsync reply`, `react`, `edit` and `delete` (issue 29), as the docs show them: a message named by
 * the number `read` prints before its author, each a signed record through the engine (read back as
 * the web and `read` derive them); `read` with line breaks and tabs; and `tail`/`listen` saying when
 * the connection drops and comes back (through a proxy that cuts it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { storePath } from "../../cli/context.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type CliUser, cleanupTempDirs, LineReader, registerCli } from "./cli-harness.ts";
import { Outage } from "./tmux-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;

beforeAll(async () => {
  t = await startTestServer();
  alice = await registerCli(t.url, "alice");
  bob = await registerCli(t.url, "bob");
  const id = (await alice.cli.ok(["create", "g", "--type", "public"])).trim().split("\n").pop()?.trim();
  await bob.cli.ok(["join", id as string]);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  cleanupTempDirs();
});

const seqOf = async (who: CliUser, text: string) =>
  (JSON.parse(await who.cli.ok(["send", "#g", text, "--json"])) as { seq: number }).seq;

describe("reply, react, edit and delete from the command line", () => {
  test("each by the number read shows; read applies them", async () => {
    const n = await seqOf(alice, "lunch at noon?");
    expect(await alice.cli.ok(["read", "#g"])).toContain(`(${n}) ${alice.handle} ✓ lunch at noon?`);
    expect(await bob.cli.ok(["reply", "#g", String(n), "yes,", "noon", "works"])).toMatch(/^at:\/\//);
    expect(await bob.cli.ok(["react", "#g", String(n), "👍"])).toMatch(/^at:\/\//);
    expect(await alice.cli.ok(["edit", "#g", String(n), "lunch at one?"])).toMatch(/^at:\/\//);
    const read = await bob.cli.ok(["read", "#g"]);
    expect(read).toContain(`(${n}) ${alice.handle} ✓ lunch at one? (edited) [👍 1]`);
    expect(read).toMatch(new RegExp(`${bob.handle} ✓ ↳ [^\\n]*yes, noon works`));
    const items = JSON.parse(await alice.cli.ok(["read", "#g", "--json"])) as {
      kind: string;
      verified: boolean;
      rich: { type: string } | null;
    }[];
    for (const type of ["reply", "reaction", "edit"])
      expect(items.find((i) => i.rich?.type === type)?.verified).toBe(true);
    // Taking the reaction back, and deleting: signed too.
    await bob.cli.ok(["react", "#g", String(n), "👍", "--remove"]);
    expect(await alice.cli.ok(["read", "#g"])).not.toContain("[👍 1]");
    expect(await alice.cli.ok(["delete", "#g", String(n)])).toBe(`Deleted message ${n} in #g\n`);
    expect(await bob.cli.ok(["read", "#g"])).toMatch(new RegExp(`\\(${n}\\) ${alice.handle} ∅ <deleted by`));
  }, 60_000);

  test("usage errors exit 2, an unknown number 4", async () => {
    const n = await seqOf(alice, "mine alone");
    const code = async (who: CliUser, args: string[]) => (await who.cli.run(args)).code;
    expect(await code(bob, ["edit", "#g", String(n), "not", "yours"])).toBe(2);
    expect(await code(bob, ["react", "#g", String(n), "nope"])).toBe(2);
    expect(await code(bob, ["delete", "#g", String(n), "junk"])).toBe(2);
    expect(await code(bob, ["react", "#g", String(n), "👍", "junk"])).toBe(2);
    expect(await code(bob, ["reply", "#g", "abc", "hi"])).toBe(2);
    expect(await code(bob, ["reply", "#g", "99999", "hi"])).toBe(4);
    const r = await bob.cli.run(["delete", "#g", String(n)]);
    // Someone else's message in a channel bob does not own: the server refuses.
    expect(r.code).not.toBe(0);
    expect(await alice.cli.ok(["read", "#g"])).toContain("mine alone");
  }, 60_000);

  test("read shows line breaks as lines under the text, tabs as spaces, and no escape", async () => {
    await bob.cli.ok(["send", "#g", "-"], { stdin: "first line\nsecond\tline\u001b[2J\u009b31m\n" });
    const read = await alice.cli.ok(["read", "#g"]);
    const lines = read.split("\n");
    const first = lines.findIndex((l) => l.endsWith("first line"));
    expect(first).toBeGreaterThan(-1);
    const at = (lines[first] as string).indexOf("first line");
    expect(lines[first + 1]).toStartWith(`${" ".repeat(at)}second    line`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: that they never pass is the point.
    expect(read).not.toMatch(/[\u001b\u009b\t]/);
  }, 60_000);
});

describe("tail and listen say when the connection drops and comes back", () => {
  test("tail on stderr; listen --json as connection events, after the missed items", async () => {
    const outage = new Outage(Number(new URL(t.url).port));
    const via = `http://127.0.0.1:${outage.port}`;
    const file = (u: string) =>
      `${alice.cli.configHome}/wsync/${storePath(u).slice(storePath(u).lastIndexOf("/") + 1)}`;
    copyFileSync(file(t.url), file(via));
    const tail = alice.cli.spawn(["tail", "#g", "--server", via]);
    const listen = alice.cli.spawn(["listen", "--json", "--server", via]);
    try {
      const tailErr = new LineReader(tail.stderr);
      const tailOut = new LineReader(tail.stdout);
      const out = new LineReader(listen.stdout);
      const err = new LineReader(listen.stderr);
      await tailErr.waitFor((l) => l.startsWith("Following"), 20_000, "tail to start");
      await err.waitFor((l) => l.startsWith("Listening"), 20_000, "listen to start");
      outage.cut();
      await tailErr.waitFor((l) => l.includes("connection to the server lost"), 20_000, "tail: lost");
      await out.waitFor((l) => l.includes('"state":"lost"'), 20_000, "listen: lost");
      await bob.cli.ok(["send", "#g", "while the link was down"]);
      outage.mend();
      await tailErr.waitFor(
        (l) => /connection back; .*\d+ missed records? filled in/.test(l),
        30_000,
        "tail: back",
      );
      await tailOut.waitFor((l) => l.includes("while the link was down"), 5_000, "tail: the missed message");
      const restored = await out.waitFor((l) => l.includes('"state":"restored"'), 30_000, "listen: restored");
      const event = JSON.parse(restored) as { type: string; filled: number };
      expect(event.type).toBe("connection");
      expect(event.filled).toBeGreaterThanOrEqual(1);
      // The missed item came before the event that says the gap was filled.
      const lines = out.lines;
      const item = lines.findIndex((l) => l.includes("while the link was down"));
      expect(item).toBeGreaterThan(-1);
      expect(item).toBeLessThan(lines.indexOf(restored));
      for (const l of lines) JSON.parse(l);
    } finally {
      tail.kill();
      listen.kill();
      outage.stop();
    }
  }, 90_000);
});

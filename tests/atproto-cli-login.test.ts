/**
 * `wsync login --atproto HANDLE` against the offline fixture (fixtures/atproto): the CLI prints the
 * PDS's URL and listens on a loopback port; Chromium walks the PDS's own pages; the server hands the
 * CLI's listener a one-time code that only the CLI's verifier redeems. Then wsync commands work.
 * Refusals: a wrong verifier, a reused code, a redirect that is not loopback. And protocol §7's name
 * warning when a member's ATProto handle moves and they sign in with the new one.
 * When the fixture cannot be installed or Chromium is missing, the tests say so and why.
 */

import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import type { AtprotoFixture } from "../fixtures/atproto/start.ts";
import { Cli, cleanupTempDirs, registerCli, tempDir } from "./cli/cli-harness.ts";
import { launchChromium } from "./e2e/browser.ts";
import { startTestServer, type TestServer } from "./server/harness.ts";
import { atprotoFixtureOrWhy } from "./support/atproto-fixture-or-why.ts";
import { signInAtPdsPage } from "./support/atproto-pds-page.ts";

const { fixture, why } = await atprotoFixtureOrWhy("ATProto CLI sign-in tests", {
  accounts: ["alice", "bob", "carol"],
});

let browser: Browser | null = null;
let srv: TestServer | null = null;

afterAll(async () => {
  await browser?.close();
  await srv?.stop();
  delete process.env.WSYNC_ATPROTO_PLC_URL;
  delete process.env.WSYNC_ATPROTO_HANDLE_RESOLVER;
  await fixture?.stop();
  cleanupTempDirs();
});

const post = (path: string, body: unknown) =>
  fetch(`${srv?.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const newVerifier = () => {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
};

/** A channel's id by name, from the server's storage. */
async function channelId(server: TestServer, name: string): Promise<string | undefined> {
  const db = new Database(server.config.sqlitePath);
  try {
    return (db.query("SELECT id FROM channels WHERE name = ?").get(name) as { id: string } | null)?.id;
  } finally {
    db.close();
  }
}

function account(name: string) {
  const a = fixture?.account(name);
  if (!a) throw new Error(`no fixture account ${name}`);
  return a;
}

/** Walks the PDS in a fresh browser context; gives the URL the browser was sent to at the end. */
async function walkPds(url: string, password: string): Promise<string> {
  browser ??= await launchChromium();
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    return await signInAtPdsPage(page, url, password);
  } finally {
    await context.close();
  }
}

/** Runs `wsync login --atproto HANDLE` on this device and walks the PDS with the URL it prints. */
async function cliLogin(cli: Cli, handle: string, password: string) {
  const run = cli.start(["login", "--atproto", handle]);
  const url = await run.out.waitFor((l) => l.startsWith("http"), 30_000, "the PDS URL");
  expect(new URL(url).origin).toBe(fixture?.pdsUrl as string);
  const landed = await walkPds(url, password);
  const code = await run.proc.exited;
  return { code, url, landed, out: run.out.lines.join("\n"), err: run.err.lines.join("\n") };
}

describe.if(!why)("wsync login --atproto (offline PDS fixture)", () => {
  let alice: Cli;

  test("the CLI prints the PDS's URL, the browser comes back to its loopback listener with a one-time code, and wsync commands work", async () => {
    const fx = fixture as AtprotoFixture;
    process.env.WSYNC_ATPROTO_PLC_URL = fx.plcUrl;
    process.env.WSYNC_ATPROTO_HANDLE_RESOLVER = fx.pdsUrl;
    srv = await startTestServer();
    alice = new Cli(srv.url);
    const me = account("alice");
    const r = await cliLogin(alice, "alice.test", me.password);
    if (r.code !== 0) throw new Error(`login exited ${r.code}\n${r.out}\n${r.err}`);
    expect(r.out).toContain(`Signed in as alice.test (ATProto: ${me.did})`);
    expect(r.out).toContain("Your keys were made on this device");
    // The browser ended on the CLI's listener, carrying one code and nothing else.
    const landed = new URL(r.landed);
    expect(landed.hostname).toBe("127.0.0.1");
    expect([...landed.searchParams.keys()]).toEqual(["code"]);
    const code = landed.searchParams.get("code") as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // A normal session: whoami, a channel, a message read back verified.
    const who = JSON.parse(await alice.ok(["whoami", "--json"])) as { did: string; handle: string };
    expect(who).toMatchObject({ did: me.did, handle: "alice.test" });
    await alice.ok(["create", "moved", "--type", "public"]);
    await alice.ok(["send", "#moved", "hello from the terminal"]);
    const items = JSON.parse(await alice.ok(["read", "#moved", "--json"])) as {
      text?: string;
      verified?: boolean;
    }[];
    expect(items.find((i) => i.text === "hello from the terminal")?.verified).toBe(true);

    // The code was used: presenting it again (even with any verifier) is refused.
    const again = await post("/api/atproto/cli-exchange", { code, verifier: newVerifier().verifier });
    expect(again.status).toBe(401);
  }, 180_000);

  test("on a second device the sign-in leads to the usual key paths: the key comes back from the backup", async () => {
    const me = account("alice");
    const file = join(tempDir("wsync-pass-"), "pass.txt");
    writeFileSync(file, "purple staple horse battery correct 42\n", { mode: 0o600 });
    await alice.ok(["keys", "backup", "--passphrase-file", file]);
    const laptop = new Cli((srv as TestServer).url);
    const r = await cliLogin(laptop, "alice.test", me.password);
    if (r.code !== 0) throw new Error(`login exited ${r.code}\n${r.out}\n${r.err}`);
    expect(r.out).toContain("Signed in as alice.test");
    expect(r.out).not.toContain("Your keys were made");
    // Without a terminal, the same help a password login prints on a new device.
    expect(r.err).toContain("This device has no private key for your account. To use it here, run one of:");
    const refused = await laptop.run(["read", "#moved"]);
    expect(refused.code).toBe(3);
    await laptop.ok(["keys", "restore", "--passphrase-file", file]);
    const items = JSON.parse(await laptop.ok(["read", "#moved", "--json"])) as { text?: string }[];
    expect(items.some((i) => i.text === "hello from the terminal")).toBe(true);
    // The account's key did not change: the first device still reads and writes.
    await alice.ok(["send", "#moved", "from the first device"]);
  }, 180_000);

  test("a wrong verifier is refused and spends the code; the right one cannot use it after", async () => {
    const bob = account("bob");
    // What the CLI does, by hand: a loopback listener of the test's own, and a verifier.
    const got: string[] = [];
    const listener = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        if (new URL(req.url).pathname === "/callback") got.push(req.url);
        return new Response("ok");
      },
    });
    try {
      const mine = newVerifier();
      const start = await post("/api/atproto/cli-login", {
        handle: "bob.test",
        redirect: `http://127.0.0.1:${listener.port}/callback`,
        challenge: mine.challenge,
      });
      expect(start.status).toBe(200);
      const { url } = (await start.json()) as { url: string };
      const landed = new URL(await walkPds(url, bob.password));
      expect(landed.port).toBe(String(listener.port));
      const code = landed.searchParams.get("code") as string;
      expect(got.length).toBe(1);

      const wrong = await post("/api/atproto/cli-exchange", { code, verifier: newVerifier().verifier });
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { error: string }).error).toBe("Unauthorized");
      const late = await post("/api/atproto/cli-exchange", { code, verifier: mine.verifier });
      expect(late.status).toBe(401);
      // The account exists (the PDS signed bob in), but no session was ever handed out for it.
      const account = await srv?.storage.accounts.byDid(bob.did);
      expect(account?.handle).toBe("bob.test");
      expect((await srv?.storage.sessions.listActive(bob.did, Date.now()))?.length).toBe(0);
    } finally {
      await listener.stop(true);
    }
  }, 120_000);

  test("the right verifier redeems a code once", async () => {
    const carol = account("carol");
    const listener = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
    try {
      const mine = newVerifier();
      const start = await post("/api/atproto/cli-login", {
        handle: "carol.test",
        redirect: `http://127.0.0.1:${listener.port}/cb`,
        challenge: mine.challenge,
      });
      const { url } = (await start.json()) as { url: string };
      const code = new URL(await walkPds(url, carol.password)).searchParams.get("code") as string;
      const first = await post("/api/atproto/cli-exchange", { code, verifier: mine.verifier });
      expect(first.status).toBe(200);
      const session = (await first.json()) as { did: string; handle: string; refreshJwt: string };
      expect(session).toMatchObject({ did: carol.did, handle: "carol.test" });
      expect(session.refreshJwt.length).toBeGreaterThan(20);
      const reused = await post("/api/atproto/cli-exchange", { code, verifier: mine.verifier });
      expect(reused.status).toBe(401);
    } finally {
      await listener.stop(true);
    }
  }, 120_000);

  test("a sign-in the server refuses reaches the CLI, which stops with the reason (exit 3)", async () => {
    const server = srv as TestServer;
    const bob = account("bob");
    const alice = account("alice");
    const cli = new Cli(server.url);
    const run = cli.start(["login", "--atproto", "bob.test"]);
    const url = await run.out.waitFor((l) => l.startsWith("http"), 30_000, "the PDS URL");
    // What the server remembered for this request is made to name alice, so the PDS's answer (bob
    // signs in) is refused as a DID other than the handle's; the request stays the terminal's.
    const db = new Database(server.config.sqlitePath);
    const rows = db.query("SELECT key, value FROM atproto_oauth WHERE store = 'pending'").all() as {
      key: string;
      value: string;
    }[];
    db.close();
    expect(rows.length).toBe(1);
    const row = rows[0] as { key: string; value: string };
    const pending = { ...JSON.parse(row.value), handle: "alice.test", did: alice.did };
    expect(pending.cli.redirect).toStartWith("http://127.0.0.1:");
    await server.storage.atproto.set("pending", row.key, JSON.stringify(pending), Date.now() + 60_000);
    const landed = new URL(await walkPds(url, bob.password));
    expect([...landed.searchParams.keys()]).toEqual(["error"]);
    expect(await run.proc.exited).toBe(3);
    expect(run.err.lines.join("\n")).toContain(`the PDS signed in ${bob.did}, not alice.test`);
    expect(existsSync(cli.storeFile) ? readFileSync(cli.storeFile, "utf8") : "").not.toContain("refreshJwt");
  }, 120_000);

  test("a redirect that is not a loopback http URL with a port, or a malformed challenge or code, is refused", async () => {
    const { challenge } = newVerifier();
    for (const redirect of [
      "https://evil.example/callback",
      "http://evil.example:8080/callback",
      "http://localhost:8080/callback",
      "http://127.0.0.1/callback",
      "https://127.0.0.1:8080/callback",
      "http://10.0.0.1:8080/callback",
      "http://user@127.0.0.1:8080/callback",
      "http://127.0.0.1:8080/callback?next=https://evil.example",
      "javascript:alert(1)",
      42,
    ]) {
      const res = await post("/api/atproto/cli-login", { handle: "alice.test", redirect, challenge });
      expect({ redirect, status: res.status }).toEqual({ redirect, status: 422 });
      expect(((await res.json()) as { message: string }).message).toStartWith("redirect:");
    }
    const badChallenge = await post("/api/atproto/cli-login", {
      handle: "alice.test",
      redirect: "http://127.0.0.1:8080/callback",
      challenge: "short",
    });
    expect(badChallenge.status).toBe(422);
    const badCode = await post("/api/atproto/cli-exchange", { code: "x", verifier: newVerifier().verifier });
    expect(badCode.status).toBe(422);
    const notJson = await fetch(`${srv?.url}/api/atproto/cli-exchange`, { method: "POST", body: "{" });
    expect(notJson.status).toBe(422);
    // The CLI refuses to mix --atproto with a password login.
    const mixed = await alice.run(["login", "--atproto", "alice.test", "--identifier", "alice"]);
    expect(mixed.code).toBe(2);
  }, 60_000);

  test("a member whose ATProto handle moves signs in with the new one; the others see protocol §7's name warning", async () => {
    const me = account("alice");
    const server = srv as TestServer;
    // Bob, a local account, shares a channel with alice and reads her message as verified.
    const bob = await registerCli(server.url, "bob");
    await bob.cli.ok(["join", "#moved"]);
    await alice.ok(["send", "#moved", "before the move"]);
    const before = JSON.parse(await bob.cli.ok(["read", "#moved", "--json"])) as Record<string, unknown>[];
    const first = before.find((i) => i.text === "before the move") as {
      verified: boolean;
      author: { handle: string };
    };
    expect(first.verified).toBe(true);
    expect(first.author.handle).toBe("alice.test");

    // On the ATProto side the handle moves (the PDS updates the DID document at the PLC directory).
    const pds = fixture?.pdsUrl as string;
    const login = await fetch(`${pds}/xrpc/com.atproto.server.createSession`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: "alice.test", password: me.password }),
    });
    const { accessJwt } = (await login.json()) as { accessJwt: string };
    const moved = await fetch(`${pds}/xrpc/com.atproto.identity.updateHandle`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${accessJwt}` },
      body: JSON.stringify({ handle: "alice-moved.test" }),
    });
    expect(moved.status).toBe(200);

    // The old handle no longer signs in (its DID document does not name it); the new one does, and
    // the wsync account (same did) takes the new handle.
    const old = await post("/api/atproto/cli-login", {
      handle: "alice.test",
      redirect: "http://127.0.0.1:8080/callback",
      challenge: newVerifier().challenge,
    });
    expect(old.status).toBe(404);
    const r = await cliLogin(alice, "alice-moved.test", me.password);
    if (r.code !== 0) throw new Error(`login exited ${r.code}\n${r.out}\n${r.err}`);
    expect(r.out).toContain("Signed in as alice-moved.test");
    expect((await server.storage.accounts.byDid(me.did))?.handle).toBe("alice-moved.test");
    expect((await server.storage.atproto.byDid(me.did))?.handle).toBe("alice-moved.test");
    // Her keys stayed on her device: she writes as before.
    await alice.ok(["send", "#moved", "after the move"]);

    // Bob pinned "alice.test" from a signed commit: the server now naming her otherwise is a warning,
    // and her new message is not shown as verified; her old one keeps its name.
    const after = JSON.parse(await bob.cli.ok(["read", "#moved", "--json"])) as Record<string, unknown>[];
    const msg = after.find((i) => i.text === "after the move") as {
      verified: boolean;
      author: { did: string; handle: string };
    };
    expect(msg.author).toEqual({ did: me.did, handle: "alice.test" });
    expect(msg.verified).toBe(false);
    const warning = after.find((i) => i.type === "warning" && i.check === "handle") as {
      did: string;
      text: string;
    };
    expect(warning.did).toBe(me.did);
    expect(warning.text).toContain("alice.test's name does not match the one pinned for them");
    expect(warning.text).toContain("alice-moved.test");

    // Someone joins; the joiner's epoch lists alice as the last signed list names her (only her own
    // commit may rename her): the server takes it, and the channel goes on.
    const carol = await registerCli(server.url, "carol");
    await carol.cli.ok(["join", "#moved"]);
    await bob.cli.ok(["send", "#moved", "bob after the move"]);
    const state = await server.storage.epochs.state((await channelId(server, "moved")) as string);
    const head = state.current as unknown as {
      commit: { creatorDid: string; members: { did: string; handle: string }[] };
    };
    expect(head.commit.creatorDid).toBe(carol.did);
    expect(head.commit.members.find((m) => m.did === me.did)?.handle).toBe("alice.test");
    const seen = JSON.parse(await carol.cli.ok(["read", "#moved", "--json"])) as Record<string, unknown>[];
    expect((seen.find((i) => i.text === "bob after the move") as { verified: boolean }).verified).toBe(true);

    // Her later messages stay unverified for bob, with the warning, while no commit of hers names
    // her anew: nothing moves a pinned name on the server's word.
    await alice.ok(["send", "#moved", "still unverified"]);
    const still = JSON.parse(await bob.cli.ok(["read", "#moved", "--json"])) as Record<string, unknown>[];
    expect((still.find((i) => i.text === "still unverified") as { verified: boolean }).verified).toBe(false);

    // When a new epoch is hers to make (someone left and she writes first), her commit signs the new
    // name: that moves the pin (protocol §8, a member's own rename). (Her messages still do not show
    // as verified in this view: the records from before the move carry the old name, which now
    // disagrees with the pin, so a handle warning stays open; see docs/atproto.md.)
    await carol.cli.ok(["leave", "#moved"]);
    await alice.ok(["send", "#moved", "signed under the new name"]);
    const mine = (await server.storage.epochs.state((await channelId(server, "moved")) as string))
      .current as unknown as { commit: { creatorDid: string; members: { did: string; handle: string }[] } };
    expect(mine.commit.creatorDid).toBe(me.did);
    expect(mine.commit.members.find((m) => m.did === me.did)?.handle).toBe("alice-moved.test");
    const last = JSON.parse(await bob.cli.ok(["read", "#moved", "--json"])) as Record<string, unknown>[];
    const renamed = last.find((i) => i.text === "signed under the new name") as {
      author: { handle: string };
    };
    expect(renamed.author.handle).toBe("alice-moved.test");
    const row = last.find((i) => (i.epoch as { renamed?: unknown } | null)?.renamed) as {
      epoch: { renamed: { did: string; from: string; to: string } };
    };
    expect(row.epoch.renamed).toEqual({ did: me.did, from: "alice.test", to: "alice-moved.test" });
  }, 240_000);
});

if (why)
  describe("wsync login --atproto (offline PDS fixture)", () => {
    test(`NOT RUN: ${why}`, () => {
      expect(why).not.toBe("");
    });
  });

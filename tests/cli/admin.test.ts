/**
 * `wsync admin` beside a running server (issue 34), on the server's data folder from another process:
 * disable closes the account's open socket (4423) and a running `wsync listen` (which says why), its
 * tokens and its login are refused with the operator's message, and enable lets it sign in again;
 * delete removes the account (tombstones where its messages were, no gap), hands its channel to the
 * longest-standing member, tells the members' open sockets, and the members' next message makes a new
 * epoch without it; `wsync account delete` does the same for oneself, with the password. The lists,
 * --json, and the refusals (another OS user, no database, no terminal without --yes).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownerRefusal } from "../../server/ops/admin.ts";
import { ACCOUNT_DISABLED_MESSAGE } from "../../server/services/auth-service.ts";
import { call, ok, TestSocket } from "../server/harness.ts";
import { allRecords, person } from "../server/people.ts";
import { type ServerProcess, startServerProcess, wsync } from "../server/server-process.ts";
import { cleanupTempDirs, LineReader, PASSWORD, registerCli } from "./cli-harness.ts";

let dir: string;
let data: string;
let server: ServerProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "wsync-admin-"));
  data = join(dir, "data");
  server = await startServerProcess(data);
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
  cleanupTempDirs();
});

const admin = (...args: string[]) => wsync(["admin", ...args, "--data", data]);

describe("disable and enable", () => {
  test("an open socket and a running listen are closed and told; tokens and login refused; enable restores", async () => {
    const alice = await registerCli(server.url, "alice");
    const bob = await person(server.url, "bob");
    const bobSocket = await TestSocket.connect(server.wsUrl, bob.token);
    const listen = alice.cli.spawn(["listen"]);
    const listenErr = new LineReader(listen.stderr);
    await listenErr.waitFor((l) => l.startsWith("Listening to"), 20_000, "listen to start");

    // The CLI by full handle, by the name before the suffix, and --json.
    const a = await admin("disable", alice.handle);
    expect(a.stderr).toBe("");
    expect(a.code).toBe(0);
    expect(a.stdout).toContain(`Disabled ${alice.handle} (${alice.did})`);
    const b = await admin("disable", bob.name, "--json");
    expect(b.code).toBe(0);
    expect(JSON.parse(b.stdout)).toEqual({
      handle: bob.session.handle,
      did: bob.session.did,
      disabled: true,
      sessionsRevoked: 1,
    });

    // The server learns it from the database: the socket closes with the code that says why ...
    expect(await bobSocket.waitClose(15_000)).toBe(4423);
    // ... and the running listen stops, saying why, with the auth exit code.
    expect(await listen.exited).toBe(3);
    expect(listenErr.lines.join("\n")).toContain(
      "wsync: the session ended: this account is disabled by the server's operator",
    );

    // Its tokens are refused; its login is refused with the operator's message (not "invalid").
    expect((await call(server.url, "session", {}, bob.token)).status).toBe(401);
    const login = await call(server.url, "login", { identifier: bob.name, password: PASSWORD });
    expect(login.status).toBe(403);
    expect(login.body.message).toBe(ACCOUNT_DISABLED_MESSAGE);
    const cliLogin = await alice.cli.run(["login", "--identifier", alice.handle, "--password-stdin"], {
      stdin: `${PASSWORD}\n`,
    });
    expect(cliLogin.code).not.toBe(0);
    expect(cliLogin.stderr).toContain(ACCOUNT_DISABLED_MESSAGE);
    // A wrong password is still just wrong (the state is told only to whoever knows the password).
    const guess = await call(server.url, "login", {
      identifier: bob.name,
      password: "not the password at all",
    });
    expect(guess.status).toBe(401);

    const users = JSON.parse((await admin("users", "--json")).stdout) as {
      users: { handle: string; state: string; disabledAt: number | null }[];
    };
    expect(users.users.find((u) => u.handle === bob.session.handle)?.state).toBe("disabled");
    expect(users.users.find((u) => u.handle === alice.handle)?.state).toBe("disabled");

    // Enable: a new login works, and a socket with its token stays open.
    const e = await admin("enable", bob.session.handle);
    expect(e.code).toBe(0);
    expect(e.stdout).toContain(`Enabled ${bob.session.handle}`);
    const again = await ok(server.url, "login", { identifier: bob.name, password: PASSWORD });
    expect((await call(server.url, "session", {}, again.accessJwt)).status).toBe(200);
    const back = await TestSocket.connect(server.wsUrl, again.accessJwt);
    expect((await back.request("ping", {})).type).toBe("ack");
    back.close();
    expect((await admin("enable", alice.handle)).code).toBe(0);
    await alice.cli.ok(["login", "--identifier", alice.handle, "--password-stdin"], {
      stdin: `${PASSWORD}\n`,
    });
  }, 90_000);
});

describe("delete", () => {
  test("tombstones, the channel handed on, members told, their next message rotates without it", async () => {
    const owner = await registerCli(server.url, "owner");
    const member = await registerCli(server.url, "member");
    const later = await person(server.url, "later");
    await owner.cli.ok(["create", "crew", "--type", "public"]);
    await member.cli.ok(["join", "#crew"]);
    await owner.cli.ok(["send", "#crew", "first from the owner"]);
    await member.cli.ok(["send", "#crew", "a member answers"]);
    await owner.cli.ok(["send", "#crew", "second from the owner"]);
    const channels = JSON.parse((await admin("channels", "--json")).stdout) as {
      channels: {
        id: string;
        name: string;
        ownerHandle: string;
        members: number;
        messages: number;
        bytes: number;
      }[];
    };
    const crew = channels.channels.find((c) => c.name === "crew");
    expect(crew).toMatchObject({ ownerHandle: owner.handle, members: 2, messages: 3 });
    expect(crew?.bytes).toBeGreaterThan(0);
    // Someone who joins after the member: the member is the longest-standing one left.
    const { channels: visible } = await ok(server.url, "getChannels", {}, later.token);
    const uri = visible.find((c) => c.value.name === "crew")?.uri as string;
    await ok(server.url, "joinChannel", { channelUri: uri }, later.token);
    const watcher = await TestSocket.connect(server.wsUrl, later.token);
    await watcher.request("channel:join", { channelUri: uri });
    const before = await allRecords(server.url, later, uri);

    // No terminal and no --yes: refused before anything changes.
    const refused = await admin("delete", owner.handle);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--yes");

    const d = await admin("delete", owner.handle, "--yes", "--json");
    expect(d.stderr).toBe("");
    expect(d.code).toBe(0);
    expect(JSON.parse(d.stdout)).toMatchObject({
      handle: owner.handle,
      did: owner.did,
      channels: 1,
      handedOver: 1,
      closed: 0,
      messages: 2,
    });

    // The open socket of a member hears it (the server's poll): member-left, then the notice.
    const left = await watcher.waitFor(
      (f) => f.type === "channel:member:left" && f.data.did === owner.did,
      15_000,
    );
    expect(left.data.channelUri).toBe(uri);

    // The pages: the owner's messages are tombstones at their seqs (no gap), the member's stay.
    const after = await allRecords(server.url, later, uri);
    const seqs = after.map((r) => r.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    for (const r of before) {
      const now = after.find((x) => x.seq === r.seq);
      if (r.value.$type !== "chat.wsync.message") continue;
      const byOwner = (r.value as { author: { did: string } }).author.did === owner.did;
      expect((now?.value as { content: string } | undefined)?.content === "").toBe(byOwner);
    }
    expect(
      after.some(
        (r) => r.value.$type === "chat.wsync.notify" && (r.value as { action?: string }).action === "left",
      ),
    ).toBe(true);

    // The channel passed to the longest-standing member.
    const members = await ok(server.url, "getMembers", { channelUri: uri }, later.token);
    expect(members.members.find((m) => m.isOwner)?.did).toBe(member.did);
    expect(members.members.some((m) => m.did === owner.did)).toBe(false);

    // The member's client makes a new epoch without the deleted account before its next message.
    const info0 = await ok(server.url, "getEpochInfo", { channelUri: uri }, later.token);
    await member.cli.ok(["send", "#crew", "after the deletion"]);
    const info1 = await ok(server.url, "getEpochInfo", { channelUri: uri }, later.token);
    expect(info1.epochInfo.epochNumber).toBe(info0.epochInfo.epochNumber + 1);
    const listed = (info1.epochInfo.commit as { members: { did: string }[] } | null)?.members.map(
      (m) => m.did,
    );
    expect(listed).toContain(member.did);
    expect(listed).not.toContain(owner.did);
    const read = await member.cli.ok(["read", "#crew", "--json"]);
    expect(read).toContain("after the deletion");
    expect(read).not.toContain("first from the owner");

    // Gone: its login, its session on its device; its handle is not given to anyone else.
    const login = await call(server.url, "login", { identifier: owner.handle, password: PASSWORD });
    expect(login.status).toBe(401);
    expect((await owner.cli.run(["whoami"])).code).toBe(3);
    const taken = await call(server.url, "register", {
      handle: owner.handle.split(".")[0],
      email: "someone-else@example.com",
      password: "a different long password",
    });
    expect(taken.body.error).toBe("HandleTaken");
    const users = JSON.parse((await admin("users", "--json")).stdout) as {
      users: { did: string; state: string; channels: number; messages: number }[];
    };
    expect(users.users.find((u) => u.did === owner.did)).toMatchObject({
      state: "deleted",
      channels: 0,
      messages: 0,
    });
    watcher.close();
  }, 120_000);

  test("wsync account delete: asked twice on a terminal; --yes and the password for scripts", async () => {
    const me = await registerCli(server.url, "leaver");
    const friend = await person(server.url, "friend");
    await me.cli.ok(["create", "mine", "--type", "public"]);
    await me.cli.ok(["send", "#mine", "hello from the leaver"]);
    // No terminal and no --yes: exit 2. A wrong password: exit 3 and nothing deleted.
    expect((await me.cli.run(["account", "delete"])).code).toBe(2);
    const wrong = await me.cli.run(["account", "delete", "--yes", "--password-stdin"], {
      stdin: "not my password\n",
    });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain("not this account's password");
    expect((await me.cli.run(["whoami"])).code).toBe(0);
    const done = await me.cli.run(["account", "delete", "--yes", "--password-stdin", "--json"], {
      stdin: `${PASSWORD}\n`,
    });
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ deleted: me.handle, channels: 1, messages: 1 });
    expect((await me.cli.run(["whoami"])).code).toBe(3);
    expect((await call(server.url, "login", { identifier: me.handle, password: PASSWORD })).status).toBe(401);
    // The channel it owned alone is left with no owner and no members (closed).
    const listed = JSON.parse((await admin("channels", "--json")).stdout) as {
      channels: { name: string; ownerHandle: string | null; members: number; messages: number }[];
    };
    expect(listed.channels.find((c) => c.name === "mine")).toMatchObject({
      ownerHandle: null,
      members: 0,
      messages: 0,
    });
    // Someone else's session is untouched.
    expect((await call(server.url, "session", {}, friend.token)).status).toBe(200);
  }, 90_000);
});

describe("refusals", () => {
  test("another OS user than the data folder's owner is refused (exit 2), before anything is opened", async () => {
    // The check itself, with a faked caller: a uid that is not the folder's owner.
    const own = process.getuid?.() ?? 0;
    expect(ownerRefusal(data, own)).toBeNull();
    expect(ownerRefusal(data, own + 1)).toContain(`belongs to uid ${own}, not to this user (uid ${own + 1})`);
    // End to end: as root (the test machine), a folder owned by "nobody" (65534) is refused, root too.
    if (own === 0) {
      const theirs = join(dir, "theirs");
      mkdirSync(theirs);
      await Bun.write(join(theirs, "wsync.db"), "");
      chownSync(theirs, 65534, 65534);
      const r = await wsync(["admin", "users", "--data", theirs]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`the data folder ${theirs} belongs to uid 65534, not to this user (uid 0)`);
    }
  });

  test("a folder with no database: exit 4, nothing created; an unknown handle: exit 4", async () => {
    const none = join(dir, "nothing-here");
    const r = await wsync(["admin", "users", "--data", none]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`no wsync database at ${join(none, "wsync.db")}`);
    const u = await admin("disable", "nobody-by-that-name");
    expect(u.code).toBe(4);
    expect(u.stderr).toContain('no account "nobody-by-that-name"');
  });
});

/**
 * Issue 28 defect 4, server side: a user's signed-in sessions can be listed and ended from another
 * one (docs/protocol-extensions.md "Sessions"). An ended session stops at once: its sockets close with
 * 4403 (session ended), and its access token, though still within its lifetime, is refused on every
 * route that takes one and on a new socket (4403 again, so a client does not retry it forever).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type RouteName, Routes, WsClose } from "../../core/protocol/index.ts";
import { call, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { person } from "./people.ts";

setDefaultTimeout(30_000);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

/** A second sign-in of the same account: another device's session. */
async function signInAgain(handle: string) {
  return ok(t.url, "login", { identifier: handle, password: "correct horse battery" });
}

/**
 * The status of every route that takes an access token, called with `token` and an empty body (GET:
 * none). Routes whose schema refuses an empty body answer 422 before the token is looked at; the
 * others reach the token check, which is the same one for all of them.
 */
async function statusesWith(token: string): Promise<Record<string, number>> {
  // Not "sign out everywhere else": with a valid token it would end the other sessions of the test.
  const names = (Object.keys(Routes) as RouteName[]).filter(
    (n) => Routes[n].auth === "access" && n !== "revokeOtherSessions",
  );
  const out: Record<string, number> = {};
  for (const name of names) {
    const { method, path } = Routes[name];
    const res = await fetch(`${t.url}/api${path.replace(":code", "abcd-efgh-ijkl")}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: method === "POST" || method === "PUT" ? "{}" : undefined,
    });
    out[name] = res.status;
    await res.body?.cancel();
  }
  return out;
}

describe("sessions: list and end from another device", () => {
  test("list-sessions gives the caller's live sessions, marks its own, and shows no secret", async () => {
    const alice = await person(t.url, "alice");
    const second = await signInAgain(alice.session.handle);
    const other = await person(t.url, "bob");
    const list = await ok(t.url, "listSessions", undefined, second.accessJwt);
    expect(list.sessions).toHaveLength(2);
    expect(list.sessions.filter((s) => s.current)).toHaveLength(1);
    expect(list.sessions[0]?.current).toBe(true);
    for (const s of list.sessions) {
      expect(Object.keys(s).sort()).toEqual(["createdAt", "current", "expiresAt", "id", "lastSeenAt"]);
      expect(s.lastSeenAt).toBeGreaterThanOrEqual(s.createdAt);
    }
    const text = JSON.stringify(list);
    expect(text).not.toContain(alice.session.refreshJwt);
    // Bob's session is not Alice's business.
    const bobs = await ok(t.url, "listSessions", undefined, other.token);
    expect(bobs.sessions.map((s) => s.id)).not.toContain(list.sessions[1]?.id);
    expect((await call(t.url, "listSessions")).status).toBe(401);
  });

  test("ending a session from another closes its socket at once (4403) and refuses its token everywhere", async () => {
    const alice = await person(t.url, "alice");
    const laptop = alice.session;
    const phone = await signInAgain(laptop.handle);
    const laptopSocket = await TestSocket.connect(t.wsUrl, laptop.accessJwt);
    const phoneSocket = await TestSocket.connect(t.wsUrl, phone.accessJwt);
    const before = await statusesWith(laptop.accessJwt);
    expect(Object.values(before).filter((s) => s === 401)).toEqual([]);
    // The routes an empty body gets past the schema of (the rest answer 422 before the token check).
    const reached = Object.keys(before).filter((n) => before[n] !== 422);
    expect(reached).toEqual(
      expect.arrayContaining(["session", "listSessions", "getChannels", "getInvites", "keyBackupGet"]),
    );
    const channel = await ok(t.url, "createChannel", { name: "kept", type: "public" }, laptop.accessJwt);

    const { sessions } = await ok(t.url, "listSessions", undefined, phone.accessJwt);
    const laptopId = sessions.find((s) => !s.current)?.id as string;
    expect(await ok(t.url, "revokeSession", { sessionId: laptopId }, phone.accessJwt)).toEqual({
      success: true,
    });

    expect(await laptopSocket.waitClose()).toBe(WsClose.sessionEnded);
    const after = await statusesWith(laptop.accessJwt);
    expect(reached.filter((n) => after[n] !== 401)).toEqual([]);
    // Full, valid bodies too: a write with the ended session's token does not land.
    const write = await call(
      t.url,
      "createChannel",
      { name: "after-the-end", type: "public" },
      laptop.accessJwt,
    );
    expect([write.status, write.body.error]).toEqual([401, "Unauthorized"]);
    const read = await call(t.url, "getMembers", { channelUri: channel.channel.uri }, laptop.accessJwt);
    expect(read.status).toBe(401);
    expect((await call(t.url, "refresh", undefined, laptop.refreshJwt)).status).toBe(401);
    // A new socket with the old token is told the session ended (not "bad token", which clients retry).
    const again = await TestSocket.open(t.wsUrl);
    again.sendRaw(JSON.stringify({ type: "auth", data: { token: laptop.accessJwt } }));
    expect(await again.waitClose()).toBe(WsClose.sessionEnded);

    // The phone goes on; the ended session is gone from the list.
    expect((await phoneSocket.request("ping", {})).type).toBe("ack");
    expect(phoneSocket.closeCode).toBeNull();
    const left = await ok(t.url, "listSessions", undefined, phone.accessJwt);
    expect(left.sessions.map((s) => s.id)).not.toContain(laptopId);
    // Ending it twice, or an unknown id, is NotFound.
    const twice = await call(t.url, "revokeSession", { sessionId: laptopId }, phone.accessJwt);
    expect([twice.status, twice.body.error]).toEqual([404, "NotFound"]);
    phoneSocket.close();
  });

  test("another account's session cannot be ended, and the answer is the unknown id's", async () => {
    const alice = await person(t.url, "alice");
    const mallory = await person(t.url, "mallory");
    const aliceSocket = await TestSocket.connect(t.wsUrl, alice.token);
    const { sessions } = await ok(t.url, "listSessions", undefined, alice.token);
    const r = await call(t.url, "revokeSession", { sessionId: sessions[0]?.id as string }, mallory.token);
    expect([r.status, r.body.error]).toEqual([404, "NotFound"]);
    const unknown = await call(t.url, "revokeSession", { sessionId: "A".repeat(22) }, mallory.token);
    expect([unknown.status, unknown.body.error, unknown.body.message]).toEqual([
      404,
      "NotFound",
      r.body.message,
    ]);
    expect((await call(t.url, "session", undefined, alice.token)).status).toBe(200);
    expect((await aliceSocket.request("ping", {})).type).toBe("ack");
    aliceSocket.close();
  });

  test("sign out everywhere else: every other session ends, the caller's goes on", async () => {
    const alice = await person(t.url, "alice");
    const others = [alice.session, await signInAgain(alice.session.handle)];
    const keeper = await signInAgain(alice.session.handle);
    const sockets = await Promise.all(others.map((s) => TestSocket.connect(t.wsUrl, s.accessJwt)));
    const mine = await TestSocket.connect(t.wsUrl, keeper.accessJwt);
    expect(await ok(t.url, "revokeOtherSessions", {}, keeper.accessJwt)).toEqual({
      success: true,
      revoked: 2,
    });
    for (const s of sockets) expect(await s.waitClose()).toBe(WsClose.sessionEnded);
    for (const s of others) expect((await call(t.url, "session", undefined, s.accessJwt)).status).toBe(401);
    expect((await call(t.url, "session", undefined, keeper.accessJwt)).status).toBe(200);
    expect((await mine.request("ping", {})).type).toBe("ack");
    const { sessions } = await ok(t.url, "listSessions", undefined, keeper.accessJwt);
    expect(sessions.map((s) => s.current)).toEqual([true]);
    mine.close();
  });
});

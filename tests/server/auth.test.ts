/**
 * Identity and token lifecycle (protocol §1, §3; spec §8 error texts): register, login, throttling,
 * access/refresh tokens, logout, authorize, session, public keys, the JWT secret file.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateIdentity } from "../../core/crypto/index.ts";
import { BASE32_ALPHABET, type ErrorBody, Limits, type Session, WsClose } from "../../core/protocol/index.ts";
import { LoginThrottle } from "../../server/services/login-throttle.ts";
import { loadJwtSecret } from "../../server/util/jwt-secret.ts";
import { call, ManualClock, ok, startTestServer, type TestServer, TestSocket } from "./harness.ts";
import { createChannel, person, rotate } from "./people.ts";

// Password hashing (argon2id) takes ~0.4 s a call on the 2-core CI machine; `bun test <file>` alone
// would otherwise use the 5 s default rather than the suite's --timeout 30000.
setDefaultTimeout(30_000);

const PASSWORD = "correct horse battery";
const MINUTE = 60 * 1000;

let counter = 0;
/** A handle name unique within the run (3–32 chars of a-z0-9-). */
const uniqueName = (base: string) => `${base}-${++counter}-${Math.random().toString(36).slice(2, 6)}`;

async function register(
  t: TestServer,
  name: string,
  extra: Partial<{ email: string; password: string }> = {},
) {
  return ok(t.url, "register", {
    handle: name,
    email: extra.email ?? `${name}@example.com`,
    password: extra.password ?? PASSWORD,
  });
}

const login = (t: TestServer, identifier: string, password = PASSWORD) =>
  call(t.url, "login", { identifier, password });

/** The `{error, message}` of a failed call (the harness types bodies as the success response). */
const errorOf = (r: { body: unknown }) => r.body as ErrorBody;

/** Every token a test saw, so that the logs can be searched for them at the end. */
function tokenCollector() {
  const tokens = new Set<string>();
  return {
    add(...sessions: (Session | { accessJwt?: string; refreshJwt?: string })[]) {
      for (const s of sessions) {
        if (s.accessJwt) tokens.add(s.accessJwt);
        if (s.refreshJwt) tokens.add(s.refreshJwt);
      }
    },
    leakedInto(logs: string[]): string[] {
      return logs.filter((line) => [...tokens].some((tok) => line.includes(tok)));
    },
    get size() {
      return tokens.size;
    },
  };
}

// ---------------------------------------------------------------------------------------------

describe("register", () => {
  let t: TestServer;
  const seen = tokenCollector();
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.stop();
  });

  test("a localhost public URL gives the .test suffix; the handle is lowercased and the suffix optional", async () => {
    expect(t.config.handleSuffix).toBe(".test");
    const [plain, suffixed, upper] = await Promise.all([
      register(t, "alice-r"),
      register(t, "bob-r.test"),
      register(t, "CAROL-R", { email: "Carol-R@Example.COM" }),
    ]);
    seen.add(plain, suffixed, upper);
    expect(plain.handle).toBe("alice-r.test");
    expect(suffixed.handle).toBe("bob-r.test");
    expect(upper.handle).toBe("carol-r.test");
    expect(upper.email).toBe("carol-r@example.com");
    for (const s of [plain, suffixed, upper]) {
      expect(s.did).toMatch(/^did:plc:[a-z2-7]{24}$/);
      expect(s.publicKey).toBeNull();
      expect(s.accessJwt.split(".")).toHaveLength(3);
      expect(s.refreshJwt).not.toBe(s.accessJwt);
    }
    expect(new Set([plain.did, suffixed.did, upper.did]).size).toBe(3);
  });

  test("the suffix is the public host; an IP address gives .test", async () => {
    const named = await startTestServer({ env: { WSYNC_PUBLIC_URL: "https://Chat.Example.org/" } });
    const ip = await startTestServer({ env: { WSYNC_PUBLIC_URL: "http://192.168.1.20:3000" } });
    try {
      expect(ip.config.handleSuffix).toBe(".test");
      const [a, b] = await Promise.all([
        register(named, "dave"),
        register(named, "erin.chat.example.org", { email: "erin@example.com" }),
      ]);
      seen.add(a, b);
      expect(a.handle).toBe("dave.chat.example.org");
      expect(b.handle).toBe("erin.chat.example.org");
      // Another server's suffix is not this one's: it is part of the name, which then has dots.
      const foreign = await call(named.url, "register", {
        handle: "frank.test",
        email: "frank@example.com",
        password: PASSWORD,
      });
      expect(foreign.status).toBe(422);
      expect(foreign.body.message).toStartWith("handle: ");
    } finally {
      await named.stop();
      await ip.stop();
    }
  });

  test("an invalid handle is 422 InvalidRequest naming handle, and creates nothing", async () => {
    const bad = [
      "ab",
      "-abc",
      "abc-",
      "a_b",
      "x".repeat(33),
      "ab c",
      "",
      "abc.example.com",
      "ünï",
      ".test",
      "a@b",
    ];
    for (const handle of bad) {
      const r = await call(t.url, "register", { handle, email: "nobody@example.com", password: PASSWORD });
      expect({ handle, status: r.status, error: r.body.error }).toEqual({
        handle,
        status: 422,
        error: "InvalidRequest",
      });
      expect(r.body.message).toStartWith("handle: ");
    }
    // 3 and 32 characters are the bounds, inclusive.
    const edge = await Promise.all([register(t, "abc"), register(t, "y".repeat(32))]);
    seen.add(...edge);
    expect(edge.map((s) => s.handle)).toEqual(["abc.test", `${"y".repeat(32)}.test`]);
    expect(await t.storage.accounts.byEmail("nobody@example.com")).toBeNull();
  });

  test("HandleTaken and EmailTaken carry the spec's texts, whatever the case or suffix", async () => {
    const first = await register(t, "grace", { email: "grace@example.com" });
    seen.add(first);
    for (const handle of ["grace", "GRACE", "grace.test", "Grace.Test"]) {
      const r = await call(t.url, "register", { handle, email: "other@example.com", password: PASSWORD });
      expect(r.status).toBe(409);
      expect(errorOf(r)).toEqual({ error: "HandleTaken", message: "Handle is already taken" });
    }
    for (const email of ["grace@example.com", "GRACE@Example.com"]) {
      const r = await call(t.url, "register", { handle: "grace-two", email, password: PASSWORD });
      expect(r.status).toBe(409);
      expect(errorOf(r)).toEqual({ error: "EmailTaken", message: "Email is already registered" });
    }
    expect(await t.storage.accounts.byHandle("grace-two.test")).toBeNull();
    expect(await t.storage.accounts.byEmail("other@example.com")).toBeNull();
  });

  test("a weak password is 422 WeakPassword with a message that mentions the password", async () => {
    const cases = [
      { password: "short1!", why: "under 10 characters" },
      { password: "a".repeat(Limits.passwordMinLength - 1), why: "one short" },
      { password: "password123", why: "common" },
      { password: "PASSWORD123", why: "common, any case" },
      { password: "abababababab", why: "two distinct characters" },
      { password: "henry-weak", why: "the handle itself" },
    ];
    for (const c of cases) {
      const r = await call(t.url, "register", {
        handle: "henry-weak",
        email: "henry@example.com",
        password: c.password,
      });
      expect({ why: c.why, status: r.status, error: r.body.error }).toEqual({
        why: c.why,
        status: 422,
        error: "WeakPassword",
      });
      // The client shows "Password is not strong enough" for a message mentioning the password (spec §8).
      expect(errorOf(r).message.toLowerCase()).toContain("password");
    }
    const tooLong = await call(t.url, "register", {
      handle: "henry-weak",
      email: "henry@example.com",
      password: "x1".repeat(Limits.passwordMaxLength),
    });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.message).toStartWith("password: ");
    expect(await t.storage.accounts.byHandle("henry-weak.test")).toBeNull();
    // Exactly the minimum length is enough.
    seen.add(await register(t, "henry-ok", { password: "k9#mQ2$vLx" }));
  });

  test("an invalid email is 422 naming email", async () => {
    for (const email of ["nope", "a@b", "a b@c.de", "@c.de", ""]) {
      const r = await call(t.url, "register", { handle: "ivy-mail", email, password: PASSWORD });
      expect(r.status).toBe(422);
      expect(r.body.message).toStartWith("email: ");
    }
  });

  test("no token appears in the server log", () => {
    expect(seen.size).toBeGreaterThan(0);
    expect(seen.leakedInto(t.logs)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("login", () => {
  let t: TestServer;
  let account: Session;
  const seen = tokenCollector();
  beforeAll(async () => {
    t = await startTestServer();
    account = await register(t, "judy", { email: "judy@example.com" });
    seen.add(account);
  });
  afterAll(async () => {
    await t?.stop();
  });

  test("by handle with or without the suffix, in any case, and by email", async () => {
    for (const identifier of [
      "judy",
      "judy.test",
      "JUDY.Test",
      " judy ",
      "judy@example.com",
      "Judy@Example.COM",
    ]) {
      const r = await login(t, identifier);
      expect({ identifier, status: r.status }).toEqual({ identifier, status: 200 });
      seen.add(r.body);
      expect(r.body.did).toBe(account.did);
      expect(r.body.handle).toBe("judy.test");
      expect(r.body.email).toBe("judy@example.com");
      // Each login is its own session with its own tokens.
      expect(r.body.refreshJwt).not.toBe(account.refreshJwt);
      expect((await call(t.url, "session", {}, r.body.accessJwt)).status).toBe(200);
    }
  });

  test("a wrong password and an unknown user get the same InvalidCredentials answer", async () => {
    const answers = await Promise.all([
      login(t, "judy", "wrong password here"),
      login(t, "judy@example.com", "wrong password here"),
      login(t, "nobody-here"),
      login(t, "nobody@example.com"),
      login(t, "not a handle!"),
    ]);
    for (const r of answers) {
      expect(r.status).toBe(401);
      expect(errorOf(r)).toEqual({ error: "InvalidCredentials", message: "Invalid credentials" });
    }
  });

  test("no token appears in the server log", () => {
    expect(seen.leakedInto(t.logs)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("login throttling (5 failures per identifier in 15 minutes)", () => {
  let t: TestServer;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestServer({ clock });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const fail = (identifier: string) => login(t, identifier, "not the password");

  test("the 6th attempt is 429 RateLimited with Retry-After, even with the right password; the window passes", async () => {
    const [kim, lee] = await Promise.all([register(t, "kim"), register(t, "lee")]);
    for (let i = 1; i <= Limits.loginMaxFailures; i++) {
      const r = await fail("kim");
      expect({ attempt: i, status: r.status }).toEqual({ attempt: i, status: 401 });
    }
    const limited = await login(t, "kim");
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("RateLimited");
    // All five failures happened at the same (frozen) instant: the wait is the whole window.
    expect(limited.headers.get("retry-after")).toBe(String(Limits.loginFailureWindowMs / 1000));
    // Other identifiers are not affected.
    const other = await login(t, "lee");
    expect(other.status).toBe(200);
    expect(other.body.did).toBe(lee.did);

    clock.advance(10 * MINUTE);
    const later = await login(t, "kim");
    expect(later.status).toBe(429);
    expect(Number(later.headers.get("retry-after"))).toBe(5 * 60);

    clock.advance(5 * MINUTE + 1000);
    const after = await login(t, "kim");
    expect(after.status).toBe(200);
    expect(after.body.did).toBe(kim.did);
  });

  test("the handle (with or without suffix) and the email of one account share one counter", async () => {
    const mia = await register(t, "mia", { email: "mia@example.com" });
    for (const identifier of ["mia", "MIA.test", "mia@example.com", "Mia@Example.com", "mia.test"]) {
      expect((await fail(identifier)).status).toBe(401);
    }
    for (const identifier of ["mia", "mia.test", "mia@example.com"]) {
      const r = await login(t, identifier);
      expect({ identifier, status: r.status }).toEqual({ identifier, status: 429 });
    }
    clock.advance(Limits.loginFailureWindowMs + 1000);
    expect((await login(t, "mia@example.com")).body.did).toBe(mia.did);
  });

  test("a success resets the counter", async () => {
    await register(t, "ned");
    for (let i = 0; i < Limits.loginMaxFailures - 1; i++) expect((await fail("ned")).status).toBe(401);
    expect((await login(t, "ned")).status).toBe(200);
    // Five more failures are allowed after the success; the sixth attempt is refused.
    for (let i = 0; i < Limits.loginMaxFailures; i++) expect((await fail("ned")).status).toBe(401);
    expect((await login(t, "ned")).status).toBe(429);
  });

  test("a burst of concurrent guesses gets no more than 5 password checks", async () => {
    await register(t, "olga");
    const burst = await Promise.all(Array.from({ length: 12 }, () => fail("olga")));
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expect((await login(t, "olga")).status).toBe(429);
    clock.advance(Limits.loginFailureWindowMs + 1000);
    expect((await login(t, "olga")).status).toBe(200);
  });

  test("unknown identifiers are throttled too, separately", async () => {
    for (let i = 0; i < Limits.loginMaxFailures; i++) expect((await fail("ghost-user")).status).toBe(401);
    expect((await fail("ghost-user")).status).toBe(429);
    expect((await fail("ghost-user-2")).status).toBe(401);
  });
});

describe("LoginThrottle", () => {
  test("an attempt counts from when it is let through; one never decided expires with the window", () => {
    const clock = new ManualClock(1_000_000);
    const throttle = new LoginThrottle(clock, 5, 15 * MINUTE);
    for (let i = 0; i < 5; i++) expect(throttle.retryAfter("k")).toBe(0);
    // Five in flight, none decided yet: the sixth waits for the window.
    expect(throttle.retryAfter("k")).toBe(15 * 60);
    expect(throttle.retryAfter("other")).toBe(0);
    clock.advance(15 * MINUTE + 1);
    expect(throttle.retryAfter("k")).toBe(0);
  });

  test("fail consumes the reservation, succeed clears everything, Retry-After counts down", () => {
    const clock = new ManualClock(1_000_000);
    const throttle = new LoginThrottle(clock, 5, 15 * MINUTE);
    for (let i = 0; i < 5; i++) {
      expect(throttle.retryAfter("k")).toBe(0);
      throttle.fail("k");
      clock.advance(MINUTE);
    }
    // Failures at 0..4 minutes; now is 5 minutes: the oldest leaves the window in 10 minutes.
    expect(throttle.retryAfter("k")).toBe(10 * 60);
    clock.advance(10 * MINUTE + 1);
    expect(throttle.retryAfter("k")).toBe(0);
    throttle.succeed("k");
    for (let i = 0; i < 5; i++) expect(throttle.retryAfter("k")).toBe(0);
  });

  test("memory is bounded: past maxKeys the least recently attempted identifier is forgotten", () => {
    const clock = new ManualClock(1_000_000);
    const throttle = new LoginThrottle(clock, 1, 15 * MINUTE, 3);
    for (const k of ["a", "b", "c", "d"]) {
      expect(throttle.retryAfter(k)).toBe(0);
      throttle.fail(k);
    }
    expect(throttle.retryAfter("a")).toBe(0);
    expect(throttle.retryAfter("d")).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe("tokens and sessions", () => {
  let t: TestServer;
  const clock = new ManualClock();
  const seen = tokenCollector();
  let owen: Session;
  beforeAll(async () => {
    t = await startTestServer({ clock });
    owen = await register(t, "owen", { email: "owen@example.com" });
    seen.add(owen);
  });
  afterAll(async () => {
    await t?.stop();
  });

  const fresh = async () => {
    const r = await login(t, "owen");
    expect(r.status).toBe(200);
    seen.add(r.body);
    return r.body;
  };
  const session = (token: string) => call(t.url, "session", {}, token);
  const refresh = async (token: string) => {
    const r = await call(t.url, "refresh", undefined, token);
    if (r.status === 200) seen.add(r.body);
    return r;
  };

  test("session returns the User: did, handle, email, publicKey, and no tokens", async () => {
    const r = await session(owen.accessJwt);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      did: owen.did,
      handle: "owen.test",
      email: "owen@example.com",
      publicKey: null,
    });
  });

  test("the access token expires after 15 minutes: 401 ExpiredToken, also for the WebSocket", async () => {
    const s = await fresh();
    clock.advance(Limits.accessTokenTtlSeconds * 1000 - 1000);
    expect((await session(s.accessJwt)).status).toBe(200);
    const ws = await TestSocket.connect(t.wsUrl, s.accessJwt);
    ws.close();
    clock.advance(2000);
    const r = await session(s.accessJwt);
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("ExpiredToken");
    const late = await TestSocket.open(t.wsUrl);
    late.sendRaw(JSON.stringify({ type: "auth", data: { token: s.accessJwt } }));
    expect(await late.waitClose()).toBe(WsClose.unauthorized);
    // The refresh token outlives it: that is what it is for.
    const renewed = await refresh(s.refreshJwt);
    expect(renewed.status).toBe(200);
    expect((await session(renewed.body.accessJwt)).status).toBe(200);
  });

  test("refresh rotates; the old refresh token is refused, and presenting it again revokes the session", async () => {
    const bystander = await fresh();
    const s = await fresh();
    const r1 = await refresh(s.refreshJwt);
    expect(r1.status).toBe(200);
    expect(r1.body.did).toBe(owen.did);
    expect(r1.body.refreshJwt).not.toBe(s.refreshJwt);
    expect((await session(r1.body.accessJwt)).status).toBe(200);
    // The new pair works, including another rotation.
    const r2 = await refresh(r1.body.refreshJwt);
    expect(r2.status).toBe(200);
    expect((await session(r2.body.accessJwt)).status).toBe(200);
    // A rotated-away token is a replay: refused, and the whole session ends (reuse detection), once
    // the grace window of the rotation that replaced it (30 s) is over.
    clock.advance(30_001);
    const replay = await refresh(r1.body.refreshJwt);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe("Unauthorized");
    expect((await session(r2.body.accessJwt)).status).toBe(401);
    expect((await refresh(r2.body.refreshJwt)).status).toBe(401);
    expect((await session(s.accessJwt)).status).toBe(401);
    // Other sessions of the same user are untouched.
    expect((await session(bystander.accessJwt)).status).toBe(200);
  });

  test("refresh grace window: the token just replaced gets the current one back for 30 s, then ends the session", async () => {
    const jti = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString()).jti;
    const s = await fresh();
    const r1 = await refresh(s.refreshJwt);
    expect(r1.status).toBe(200);
    // A second process of the same device presents the token it read before r1 (at once, or 30 s on).
    clock.advance(29_000);
    const again = await refresh(s.refreshJwt);
    expect(again.status).toBe(200);
    // The same current refresh token (not another rotation), and a working access token.
    expect(jti(again.body.refreshJwt)).toBe(jti(r1.body.refreshJwt));
    expect((await session(again.body.accessJwt)).status).toBe(200);
    expect((await session(r1.body.accessJwt)).status).toBe(200);
    // Both holders go on: one rotates, the other's copy is now the token just replaced.
    const r2 = await refresh(r1.body.refreshJwt);
    expect(r2.status).toBe(200);
    const late = await refresh(again.body.refreshJwt);
    expect(late.status).toBe(200);
    expect(jti(late.body.refreshJwt)).toBe(jti(r2.body.refreshJwt));
    // Only the token just replaced: one two rotations old is a replay, and the session ends.
    const old = await refresh(s.refreshJwt);
    expect(old.status).toBe(401);
    expect((await session(r2.body.accessJwt)).status).toBe(401);
    expect((await refresh(r2.body.refreshJwt)).status).toBe(401);

    // Past the window, the token just replaced is a replay too.
    const t2 = await fresh();
    const n1 = await refresh(t2.refreshJwt);
    expect(n1.status).toBe(200);
    clock.advance(30_001);
    expect((await refresh(t2.refreshJwt)).status).toBe(401);
    expect((await session(n1.body.accessJwt)).status).toBe(401);
  });

  test("a refresh token is not an access token, and an access token is not a refresh token", async () => {
    const s = await fresh();
    const asAccess = await session(s.refreshJwt);
    expect(asAccess.status).toBe(401);
    expect(asAccess.body.error).toBe("Unauthorized");
    const getChannels = await call(t.url, "getChannels", {}, s.refreshJwt);
    expect(getChannels.status).toBe(401);
    const ws = await TestSocket.open(t.wsUrl);
    ws.sendRaw(JSON.stringify({ type: "auth", data: { token: s.refreshJwt } }));
    expect(await ws.waitClose()).toBe(WsClose.unauthorized);
    const asRefresh = await refresh(s.accessJwt);
    expect(asRefresh.status).toBe(401);
    expect(asRefresh.body.error).toBe("Unauthorized");
    const logout = await call(t.url, "logout", { did: s.did, refreshJwt: s.accessJwt });
    expect(logout.status).toBe(401);
    // None of that harmed the session.
    expect((await session(s.accessJwt)).status).toBe(200);
    expect((await refresh(s.refreshJwt)).status).toBe(200);
  });

  test("logout ends that session at once (401, its socket closed with 4403); other sessions keep working", async () => {
    const [a, b] = [await fresh(), await fresh()];
    const wsA = await TestSocket.connect(t.wsUrl, a.accessJwt);
    const wsB = await TestSocket.connect(t.wsUrl, b.accessJwt);
    // The did must match the token's.
    const wrongDid = await call(t.url, "logout", {
      did: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa",
      refreshJwt: a.refreshJwt,
    });
    expect(wrongDid.status).toBe(401);
    expect((await session(a.accessJwt)).status).toBe(200);

    const out = await call(t.url, "logout", { did: a.did, refreshJwt: a.refreshJwt });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true });
    const after = await session(a.accessJwt);
    expect(after.status).toBe(401);
    expect(after.body.error).toBe("Unauthorized");
    expect((await refresh(a.refreshJwt)).status).toBe(401);
    expect(await wsA.waitClose()).toBe(WsClose.sessionEnded);

    expect((await session(b.accessJwt)).status).toBe(200);
    expect((await wsB.request("ping", {})).type).toBe("ack");
    expect(wsB.closeCode).toBeNull();
    // A new socket for the ended session is refused, as ended (4403: clients do not retry it).
    const again = await TestSocket.open(t.wsUrl);
    again.sendRaw(JSON.stringify({ type: "auth", data: { token: a.accessJwt } }));
    expect(await again.waitClose()).toBe(WsClose.sessionEnded);
    wsB.close();
  });

  test("authorize: a did and its valid access token give a session; another did does not", async () => {
    const s = await fresh();
    const other = await register(t, "pia");
    seen.add(other);
    const wrong = await call(t.url, "authorize", { did: other.did, accessJwt: s.accessJwt });
    expect(wrong.status).toBe(401);
    const garbage = await call(t.url, "authorize", { did: s.did, accessJwt: "not.a.token" });
    expect(garbage.status).toBe(401);
    const refreshAsAccess = await call(t.url, "authorize", { did: s.did, accessJwt: s.refreshJwt });
    expect(refreshAsAccess.status).toBe(401);

    const r = await call(t.url, "authorize", { did: s.did, accessJwt: s.accessJwt });
    expect(r.status).toBe(200);
    seen.add(r.body);
    expect(r.body).toMatchObject({
      did: s.did,
      handle: "owen.test",
      email: "owen@example.com",
      accessJwt: s.accessJwt,
    });
    // Its refresh token works, for a session of its own that ends with the access token it came from;
    // the original session keeps its refresh token (a leaked access token cannot sign its owner out).
    const renewed = await refresh(r.body.refreshJwt);
    expect(renewed.status).toBe(200);
    expect((await session(renewed.body.accessJwt)).status).toBe(200);
    const owner = await refresh(s.refreshJwt);
    expect(owner.status).toBe(200);
    seen.add(owner.body);
    seen.add(renewed.body);
    // A leaked 15-minute access token never becomes a month-long login: past its expiry the chain that
    // authorize started is over, however often it was refreshed, while the owner's goes on.
    clock.advance(Limits.accessTokenTtlSeconds * 1000 - 60_000);
    const again = await refresh(renewed.body.refreshJwt);
    expect(again.status).toBe(200);
    seen.add(again.body);
    clock.advance(2 * 60_000);
    expect((await refresh(again.body.refreshJwt)).status).toBe(401);
    expect((await session(again.body.accessJwt)).status).toBe(401);
    expect((await refresh(owner.body.refreshJwt)).status).toBe(200);

    // An expired access token authorizes nothing.
    const t2 = await fresh();
    clock.advance(Limits.accessTokenTtlSeconds * 1000 + 1000);
    const expired = await call(t.url, "authorize", { did: t2.did, accessJwt: t2.accessJwt });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toBe("ExpiredToken");
  });

  test("a session ends 30 days after its last refresh", async () => {
    const s = await fresh();
    clock.advance(Limits.refreshTokenTtlSeconds * 1000 + 1000);
    const r = await refresh(s.refreshJwt);
    expect(r.status).toBe(401);
  });

  test("no token appears in the server log", () => {
    expect(seen.size).toBeGreaterThan(5);
    expect(seen.leakedInto(t.logs)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("public keys", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const fingerprintOf = (publicKey: string) =>
    createHash("sha256").update(Buffer.from(publicKey, "base64")).digest("hex").slice(0, 32);

  test("save-public-key: invalid key 422, same key twice ok, a different key 409 KeyExists", async () => {
    const s = await register(t, "quinn");
    for (const publicKey of [
      "",
      "AAAA",
      Buffer.alloc(65).toString("base64"),
      Buffer.from([4, ...new Uint8Array(64).fill(1)]).toString("base64"),
      Buffer.alloc(33, 2).toString("base64"),
      "not base64 at all!",
    ]) {
      const r = await call(t.url, "savePublicKey", { publicKey }, s.accessJwt);
      expect({ publicKey, status: r.status, error: r.body.error }).toEqual({
        publicKey,
        status: 422,
        error: "InvalidRequest",
      });
      expect(r.body.message).toStartWith("publicKey: ");
    }
    const k1 = await generateIdentity();
    const first = await call(t.url, "savePublicKey", { publicKey: k1.publicKey }, s.accessJwt);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, publicKey: k1.publicKey });
    // The same key again (even spelled URL-safe without padding) is fine.
    const urlSafe = Buffer.from(k1.publicKey, "base64").toString("base64url");
    expect((await call(t.url, "savePublicKey", { publicKey: k1.publicKey }, s.accessJwt)).status).toBe(200);
    expect((await call(t.url, "savePublicKey", { publicKey: urlSafe }, s.accessJwt)).body).toEqual({
      success: true,
      publicKey: k1.publicKey,
    });
    const k2 = await generateIdentity();
    for (const replace of [undefined, false]) {
      const r = await call(t.url, "savePublicKey", { publicKey: k2.publicKey, replace }, s.accessJwt);
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("KeyExists");
    }
    expect((await ok(t.url, "session", {}, s.accessJwt)).publicKey).toBe(k1.publicKey);
    // Without a token: 401.
    expect((await call(t.url, "savePublicKey", { publicKey: k2.publicKey })).status).toBe(401);
  });

  test("replace: true stores the key, posts key-changed to every channel of the user and requires rotation there", async () => {
    const [rae, sam] = await Promise.all([person(t.url, "rae"), person(t.url, "sam")]);
    const own1 = await createChannel(t.url, rae, "public", "rae one");
    const own2 = await createChannel(t.url, rae, "secret", "rae two");
    const samRoom = await createChannel(t.url, sam, "public", "sam room");
    const unrelated = await createChannel(t.url, sam, "public", "sam alone");
    await ok(t.url, "joinChannel", { channelUri: samRoom.channel.uri }, rae.token);
    expect((await rotate(t.url, rae, samRoom.channel)).res.status).toBe(200);
    const all = [own1.channel, own2.channel, samRoom.channel];
    for (const [c, viewer] of [
      [own1.channel, rae],
      [own2.channel, rae],
      [samRoom.channel, sam],
      [unrelated.channel, sam],
    ] as const) {
      const info = await ok(t.url, "getEpochInfo", { channelUri: c.uri }, viewer.token);
      expect(info.epochInfo.rotationRequired).toBe(false);
    }
    // Sam watches the shared room.
    const ws = await TestSocket.connect(t.wsUrl, sam.token);
    expect((await ws.request("channel:join", { channelUri: samRoom.channel.uri })).type).toBe("ack");

    const k2 = await generateIdentity();
    const r = await call(t.url, "savePublicKey", { publicKey: k2.publicKey, replace: true }, rae.token);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, publicKey: k2.publicKey });

    for (const c of all) {
      const info = await ok(t.url, "getEpochInfo", { channelUri: c.uri }, rae.token);
      expect({ channel: c.value.name, rotationRequired: info.epochInfo.rotationRequired }).toEqual({
        channel: c.value.name,
        rotationRequired: true,
      });
      const { records } = await ok(t.url, "getMessages", { channelUri: c.uri, limit: 5 }, rae.token);
      const newest = records[0] as { value: Record<string, unknown> };
      expect(newest.value).toMatchObject({
        $type: "chat.wsync.notify",
        action: "key-changed",
        subject: { did: rae.session.did, handle: rae.session.handle },
      });
    }
    const live = await ws.waitFor(
      (f) =>
        f.type === "channel:notify:joined" &&
        (f.data.record as { value: { action: string } }).value.action === "key-changed",
    );
    expect((live.data.record as { channelUri: string }).channelUri).toBe(samRoom.channel.uri);
    ws.close();
    // A channel the user is not in is left alone.
    const untouched = await ok(t.url, "getEpochInfo", { channelUri: unrelated.channel.uri }, sam.token);
    expect(untouched.epochInfo.rotationRequired).toBe(false);
    const { records } = await ok(t.url, "getMessages", { channelUri: unrelated.channel.uri }, sam.token);
    expect(records.some((x) => (x.value as { action?: string }).action === "key-changed")).toBe(false);

    // The new key is what everyone sees now; the replaced one stays listed as earlier.
    const keys = await ok(t.url, "getKeys", { dids: [rae.session.did] }, sam.token);
    expect(keys.keys).toEqual([
      {
        did: rae.session.did,
        handle: rae.session.handle,
        publicKey: k2.publicKey,
        fingerprint: fingerprintOf(k2.publicKey),
        previousKeys: [{ publicKey: rae.publicKey, fingerprint: fingerprintOf(rae.publicKey) }],
      },
    ]);
    expect((await ok(t.url, "session", {}, rae.token)).publicKey).toBe(k2.publicKey);
    // Replacing with the same key again changes nothing.
    const again = await ok(t.url, "getMessages", { channelUri: own1.channel.uri }, rae.token);
    await ok(t.url, "savePublicKey", { publicKey: k2.publicKey, replace: true }, rae.token);
    expect(await ok(t.url, "getMessages", { channelUri: own1.channel.uri }, rae.token)).toEqual(again);
  });

  test("get-keys: fingerprint is hex SHA-256 of the raw key (32 chars); unknown dids omitted; at most 500", async () => {
    const [uma, vic] = await Promise.all([person(t.url, "uma"), register(t, uniqueName("vic"))]);
    const unknown = "did:plc:zzzzzzzzzzzzzzzzzzzzzzzz";
    const r = await ok(
      t.url,
      "getKeys",
      { dids: [uma.session.did, unknown, vic.did, uma.session.did] },
      uma.token,
    );
    const byDid = new Map(r.keys.map((k) => [k.did, k]));
    expect(r.keys).toHaveLength(2);
    expect(byDid.has(unknown)).toBe(false);
    expect(byDid.get(uma.session.did)).toEqual({
      did: uma.session.did,
      handle: uma.session.handle,
      publicKey: uma.publicKey,
      fingerprint: fingerprintOf(uma.publicKey),
    });
    expect(byDid.get(uma.session.did)?.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    // A user without a key is listed with nulls.
    expect(byDid.get(vic.did)).toEqual({
      did: vic.did,
      handle: vic.handle,
      publicKey: null,
      fingerprint: null,
    });

    // Distinct well-formed dids: i in base32 with the did alphabet, padded with its zero digit "a".
    const many = (n: number) =>
      Array.from(
        { length: n },
        (_, i) =>
          `did:plc:${[...i.toString(32)]
            .map((c) => BASE32_ALPHABET[Number.parseInt(c, 32)])
            .join("")
            .padStart(24, "a")}`,
      );
    const max = await call(t.url, "getKeys", { dids: many(Limits.getKeysMaxDids) }, uma.token);
    expect(max.status).toBe(200);
    const over = await call(t.url, "getKeys", { dids: many(Limits.getKeysMaxDids + 1) }, uma.token);
    expect(over.status).toBe(422);
    expect(over.body.error).toBe("InvalidRequest");
    expect(over.body.message).toStartWith("dids: ");
    expect((await call(t.url, "getKeys", { dids: [] })).status).toBe(401);
  });
});

// ---------------------------------------------------------------------------------------------

describe("the JWT secret file", () => {
  const dirs: string[] = [];
  const scratch = () => {
    const d = mkdtempSync(join(tmpdir(), "wsync-secret-"));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("is created in the data dir with mode 0600 (dir 0700), and reused on the next load", () => {
    const dataDir = join(scratch(), "fresh", "data");
    const first = loadJwtSecret(dataDir, {});
    expect(first.length).toBeGreaterThanOrEqual(32);
    const file = join(dataDir, "jwt-secret");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const second = loadJwtSecret(dataDir, {});
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
    // Another data dir gets another secret.
    const other = loadJwtSecret(scratch(), {});
    expect(Buffer.from(other).equals(Buffer.from(first))).toBe(false);
  });

  test("a file made readable by others is tightened back to 0600 on load", () => {
    const dataDir = scratch();
    const first = loadJwtSecret(dataDir, {});
    const file = join(dataDir, "jwt-secret");
    chmodSync(file, 0o644);
    expect(Buffer.from(loadJwtSecret(dataDir, {})).equals(Buffer.from(first))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  test("WSYNC_JWT_SECRET wins and writes nothing; short or corrupt secrets are refused", () => {
    const dataDir = scratch();
    const secret = Buffer.alloc(32, 7);
    const fromEnv = loadJwtSecret(dataDir, { WSYNC_JWT_SECRET: secret.toString("base64") });
    expect(Buffer.from(fromEnv).equals(secret)).toBe(true);
    expect(() => statSync(join(dataDir, "jwt-secret"))).toThrow();
    expect(() => loadJwtSecret(dataDir, { WSYNC_JWT_SECRET: Buffer.alloc(16).toString("base64") })).toThrow();
    writeFileSync(join(dataDir, "jwt-secret"), "short\n", { mode: 0o600 });
    expect(() => loadJwtSecret(dataDir, {})).toThrow();
  });

  test("a zero-filled secret (a power loss mid-write) is refused with a message saying which file and what to do", () => {
    const dataDir = scratch();
    const file = join(dataDir, "jwt-secret");
    writeFileSync(file, Buffer.alloc(45, 0), { mode: 0o600 });
    expect(() => loadJwtSecret(dataDir, {})).toThrow(file);
    expect(() => loadJwtSecret(dataDir, {})).toThrow(/delete it to generate a new one/);
    writeFileSync(file, `${Buffer.alloc(32, 0).toString("base64")}\n`, { mode: 0o600 });
    expect(() => loadJwtSecret(dataDir, {})).toThrow(/backup/);
  });

  test("processes starting at once all end up with the same secret", async () => {
    const dataDir = scratch();
    const script = `import { loadJwtSecret } from ${JSON.stringify(join(import.meta.dir, "../../server/util/jwt-secret.ts"))};
console.log(Buffer.from(loadJwtSecret(${JSON.stringify(dataDir)}, {})).toString("hex"));`;
    const procs = Array.from({ length: 6 }, () =>
      Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" }),
    );
    const outputs = await Promise.all(
      procs.map(async (p) => {
        const [out, err, code] = await Promise.all([
          new Response(p.stdout).text(),
          new Response(p.stderr).text(),
          p.exited,
        ]);
        return { out: out.trim(), err: err.trim(), code };
      }),
    );
    expect(outputs.map((o) => o.code)).toEqual(outputs.map(() => 0));
    expect(new Set(outputs.map((o) => o.out)).size).toBe(1);
    expect(outputs[0]?.out).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(loadJwtSecret(dataDir, {})).toString("hex")).toBe(outputs[0]?.out as string);
  });
});

/**
 * Browser cookie sessions (docs/decisions/key-custody.md): `X-Wsync-Session: cookie`, the HttpOnly
 * refresh cookie on /api/auth/refresh and the cookie logout below it, against a real test server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { API_BASE, Routes, SESSION_HEADER } from "../../core/protocol/index.ts";
import { call, ManualClock, startTestServer, type TestServer } from "./harness.ts";
import { person } from "./people.ts";

const PASSWORD = "correct horse battery";

let t: TestServer;
const clock = new ManualClock();
beforeAll(async () => {
  t = await startTestServer({ clock });
});
afterAll(() => t.stop());

const REFRESH = API_BASE + Routes.refresh.path;
const COOKIE_LOGOUT = API_BASE + Routes.logoutCookie.path;

interface Cookie {
  name: string;
  value: string;
  attrs: Map<string, string>;
}

/** The wsync_refresh cookie the answer sets (exactly one), with its attributes (keys lower-cased). */
function refreshCookieOf(res: Response): Cookie {
  const cookies = res.headers.getSetCookie().filter((c) => c.startsWith("wsync_refresh="));
  expect(cookies).toHaveLength(1);
  const [pair, ...attrs] = (cookies[0] as string).split(";").map((s) => s.trim());
  const eq = (pair as string).indexOf("=");
  return {
    name: (pair as string).slice(0, eq),
    value: (pair as string).slice(eq + 1),
    attrs: new Map(
      attrs.map((a) => {
        const i = a.indexOf("=");
        return i < 0 ? [a.toLowerCase(), ""] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)];
      }),
    ),
  };
}

async function post(path: string, opts: { headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(t.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...opts.headers },
    body: JSON.stringify(opts.body ?? {}),
  });
  const body = (await res.json()) as Record<string, unknown> & { error?: string };
  return { res, body };
}

const cookieHeaders = (cookie: string, withSessionHeader = true): Record<string, string> => ({
  cookie: `wsync_refresh=${cookie}`,
  ...(withSessionHeader ? { [SESSION_HEADER]: "cookie" } : {}),
});

/** A registered user logged in with `X-Wsync-Session: cookie`. */
async function cookieLogin() {
  const p = await person(t.url, "cookie");
  const { res, body } = await post(API_BASE + Routes.login.path, {
    headers: { [SESSION_HEADER]: "cookie" },
    body: { identifier: p.name, password: PASSWORD },
  });
  expect(res.status).toBe(200);
  return { p, res, body, cookie: refreshCookieOf(res) };
}

async function sessionWorks(accessJwt: unknown): Promise<number> {
  return (await call(t.url, "session", undefined, accessJwt as string)).status;
}

describe("cookie sessions", () => {
  test("login with X-Wsync-Session: cookie sets an HttpOnly, Secure, SameSite=Strict cookie on the refresh path; refreshJwt is empty", async () => {
    const { p, body, cookie } = await cookieLogin();
    expect(SESSION_HEADER).toBe("x-wsync-session");
    expect(body.refreshJwt).toBe("");
    expect(body.did).toBe(p.session.did);
    expect(typeof body.accessJwt).toBe("string");
    expect(await sessionWorks(body.accessJwt)).toBe(200);

    expect(cookie.name).toBe("wsync_refresh");
    expect(cookie.value.split(".")).toHaveLength(3);
    expect(cookie.attrs.has("httponly")).toBe(true);
    expect(cookie.attrs.has("secure")).toBe(true);
    expect(cookie.attrs.get("samesite")).toBe("Strict");
    expect(cookie.attrs.get("path")).toBe("/api/auth/refresh");
    expect(Number(cookie.attrs.get("max-age"))).toBe(30 * 24 * 60 * 60);
    expect(cookie.attrs.has("domain")).toBe(false);
  });

  test("register with the header gets a cookie too; without it, login and register keep the bearer refresh token and set no cookie", async () => {
    const handle = `ck-reg-${Math.random().toString(36).slice(2, 8)}`;
    const reg = await post(API_BASE + Routes.register.path, {
      headers: { [SESSION_HEADER]: "cookie" },
      body: { handle, email: `${handle}@example.com`, password: PASSWORD },
    });
    expect(reg.res.status).toBe(200);
    expect(reg.body.refreshJwt).toBe("");
    expect(refreshCookieOf(reg.res).attrs.get("path")).toBe("/api/auth/refresh");

    const plain = await post(API_BASE + Routes.login.path, {
      body: { identifier: handle, password: PASSWORD },
    });
    expect(plain.res.status).toBe(200);
    expect(typeof plain.body.refreshJwt).toBe("string");
    expect((plain.body.refreshJwt as string).length).toBeGreaterThan(20);
    expect(plain.res.headers.getSetCookie()).toEqual([]);
    // Any other value of the header is not a request for a cookie.
    const other = await post(API_BASE + Routes.login.path, {
      headers: { [SESSION_HEADER]: "bearer" },
      body: { identifier: handle, password: PASSWORD },
    });
    expect(other.res.headers.getSetCookie()).toEqual([]);
    expect((other.body.refreshJwt as string).length).toBeGreaterThan(20);
  });

  test("refresh with the cookie and the header works and rotates the cookie; the rotated-away cookie is then a replay", async () => {
    const { p, cookie } = await cookieLogin();
    clock.advance(1_000);
    const r = await post(REFRESH, { headers: cookieHeaders(cookie.value) });
    expect(r.res.status).toBe(200);
    expect(r.body.refreshJwt).toBe("");
    expect(r.body.did).toBe(p.session.did);
    expect(await sessionWorks(r.body.accessJwt)).toBe(200);
    const next = refreshCookieOf(r.res);
    expect(next.value).not.toBe(cookie.value);
    expect(next.attrs.has("httponly")).toBe(true);
    expect(next.attrs.get("path")).toBe("/api/auth/refresh");

    // The new cookie refreshes again.
    clock.advance(1_000);
    const again = await post(REFRESH, { headers: cookieHeaders(next.value) });
    expect(again.res.status).toBe(200);
    const third = refreshCookieOf(again.res);

    // Presenting a rotated-away cookie revokes the session (as for bearer refresh tokens).
    const replay = await post(REFRESH, { headers: cookieHeaders(cookie.value) });
    expect({ status: replay.res.status, error: replay.body.error }).toEqual({
      status: 401,
      error: "Unauthorized",
    });
    expect((await post(REFRESH, { headers: cookieHeaders(third.value) })).res.status).toBe(401);
    expect(await sessionWorks(again.body.accessJwt)).toBe(401);
  });

  test("refresh with the cookie but without the header: 401, and the session is untouched", async () => {
    const { body, cookie } = await cookieLogin();
    const r = await post(REFRESH, { headers: cookieHeaders(cookie.value, false) });
    expect({ status: r.res.status, error: r.body.error }).toEqual({ status: 401, error: "Unauthorized" });
    expect(r.res.headers.getSetCookie()).toEqual([]);
    // Not counted as a replay: the cookie still refreshes with the header, the access token still works.
    expect(await sessionWorks(body.accessJwt)).toBe(200);
    expect((await post(REFRESH, { headers: cookieHeaders(cookie.value) })).res.status).toBe(200);
    // The header without any cookie is no session either.
    const none = await post(REFRESH, { headers: { [SESSION_HEADER]: "cookie" } });
    expect(none.res.status).toBe(401);
  });

  test("POST /api/auth/refresh/logout with the cookie and the header revokes the session and clears the cookie", async () => {
    const { p, body, cookie } = await cookieLogin();
    expect(COOKIE_LOGOUT).toBe("/api/auth/refresh/logout");
    expect(await sessionWorks(body.accessJwt)).toBe(200);

    const out = await post(COOKIE_LOGOUT, {
      headers: cookieHeaders(cookie.value),
      body: { did: p.session.did },
    });
    expect({ status: out.res.status, body: out.body }).toEqual({ status: 200, body: { success: true } });
    const cleared = refreshCookieOf(out.res);
    expect(cleared.value).toBe("");
    expect(cleared.attrs.get("max-age")).toBe("0");
    expect(cleared.attrs.get("path")).toBe("/api/auth/refresh");
    expect(cleared.attrs.has("httponly")).toBe(true);

    // The old access token and the old cookie are both dead.
    expect(await sessionWorks(body.accessJwt)).toBe(401);
    expect((await post(REFRESH, { headers: cookieHeaders(cookie.value) })).res.status).toBe(401);
    // The bearer session person() registered with is a different session and lives on.
    expect(await sessionWorks(p.token)).toBe(200);
  });

  test("cookie logout naming another did is refused and ends nothing", async () => {
    const { body, cookie } = await cookieLogin();
    const other = await person(t.url, "cookie-other");
    const out = await post(COOKIE_LOGOUT, {
      headers: cookieHeaders(cookie.value),
      body: { did: other.session.did },
    });
    expect(out.res.status).toBe(401);
    expect(await sessionWorks(body.accessJwt)).toBe(200);
    expect(await sessionWorks(other.token)).toBe(200);
  });
});

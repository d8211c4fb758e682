/**
 * Login throttling is not a lockout (issue "Server hardening" 3): failures count per (address,
 * account), so five wrong passwords from an attacker's address leave the victim's own address able to
 * log in; one address is also limited across all accounts. The address is the TCP peer; an
 * X-Forwarded-For header is ignored unless WSYNC_TRUST_PROXY says a proxy sets it.
 */
import { afterEach, expect, test } from "bun:test";
import { connect } from "node:net";
import { API_BASE, Limits, Routes } from "../../core/protocol/index.ts";
import { LOGIN_MAX_FAILURES_PER_ADDRESS } from "../../server/services/login-throttle.ts";
import { ManualClock, ok, startTestServer, type TestServer } from "./harness.ts";

let t: TestServer | null = null;
afterEach(async () => {
  await t?.stop();
  t = null;
});

const PASSWORD = "correct horse battery";

/** A login from `address`, given to the server by the fake address provider (header x-test-address). */
async function loginFrom(url: string, address: string, identifier: string, password: string) {
  const res = await fetch(url + API_BASE + Routes.login.path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-test-address": address },
    body: JSON.stringify({ identifier, password }),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after") };
}

async function fakeAddressServer(clock?: ManualClock) {
  t = await startTestServer({ clock, clientAddress: (r) => r.headers.get("x-test-address") });
  return t;
}

test("five wrong passwords from an attacker's address do not lock the victim out of their own", async () => {
  const s = await fakeAddressServer();
  await ok(s.url, "register", { handle: "victim", email: "victim@example.com", password: PASSWORD });
  for (let i = 0; i < Limits.loginMaxFailures; i++)
    expect((await loginFrom(s.url, "203.0.113.9", "victim", "wrong password!")).status).toBe(401);
  // The attacker's address is throttled for this account, with Retry-After...
  const blocked = await loginFrom(s.url, "203.0.113.9", "victim", PASSWORD);
  expect(blocked.status).toBe(429);
  expect(Number(blocked.retryAfter)).toBeGreaterThan(0);
  // ...the victim's address is not.
  expect((await loginFrom(s.url, "198.51.100.7", "victim", PASSWORD)).status).toBe(200);
  expect((await loginFrom(s.url, "198.51.100.7", "victim@example.com", PASSWORD)).status).toBe(200);
});

test("one address is limited across accounts (password spraying), with Retry-After", async () => {
  const clock = new ManualClock();
  const s = await fakeAddressServer(clock);
  const sprayer = "203.0.113.50";
  // Unknown accounts, four guesses each, so no single pair reaches its own limit.
  let i = 0;
  for (; i < LOGIN_MAX_FAILURES_PER_ADDRESS; i++)
    expect((await loginFrom(s.url, sprayer, `nobody-${Math.floor(i / 4)}`, "wrong password!")).status).toBe(
      401,
    );
  const r = await loginFrom(s.url, sprayer, "somebody-new", "wrong password!");
  expect(r.status).toBe(429);
  expect(Number(r.retryAfter)).toBeGreaterThan(0);
  // Another address is unaffected; the window passes.
  expect((await loginFrom(s.url, "198.51.100.8", "somebody-new", "wrong password!")).status).toBe(401);
  clock.advance(Limits.loginFailureWindowMs + 1000);
  expect((await loginFrom(s.url, sprayer, "somebody-new", "wrong password!")).status).toBe(401);
}, 60_000);

/** A login over a real TCP connection bound to `localAddress`; X-Forwarded-For set to `xff` if given. */
function rawLogin(url: string, localAddress: string, identifier: string, password: string, xff?: string) {
  const u = new URL(url);
  const body = JSON.stringify({ identifier, password });
  return new Promise<number>((resolve, reject) => {
    const sock = connect({ host: u.hostname, port: Number(u.port), localAddress }, () => {
      sock.write(
        `POST ${API_BASE}${Routes.login.path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n` +
          (xff ? `X-Forwarded-For: ${xff}\r\n` : "") +
          `\r\n${body}`,
      );
    });
    let got = "";
    sock.on("data", (d) => {
      got += d.toString();
    });
    sock.on("error", reject);
    sock.on("close", () => resolve(Number(got.split(" ")[1])));
  });
}

test("real sockets: 127.0.0.2 failing five times does not lock out 127.0.0.1; X-Forwarded-For is not trusted", async () => {
  t = await startTestServer();
  const s = t;
  await ok(s.url, "register", { handle: "real", email: "real@example.com", password: PASSWORD });
  for (let i = 0; i < Limits.loginMaxFailures; i++) {
    // Claiming to be the victim's address in X-Forwarded-For changes nothing without WSYNC_TRUST_PROXY.
    expect(await rawLogin(s.url, "127.0.0.2", "real", "wrong password!", "127.0.0.1")).toBe(401);
  }
  expect(await rawLogin(s.url, "127.0.0.2", "real", PASSWORD)).toBe(429);
  expect(await rawLogin(s.url, "127.0.0.1", "real", PASSWORD)).toBe(200);
});

test("behind a trusted proxy (WSYNC_TRUST_PROXY=1) the last X-Forwarded-For entry is the address", async () => {
  t = await startTestServer({ env: { WSYNC_TRUST_PROXY: "1" } });
  const s = t;
  await ok(s.url, "register", { handle: "proxied", email: "proxied@example.com", password: PASSWORD });
  for (let i = 0; i < Limits.loginMaxFailures; i++)
    expect(await rawLogin(s.url, "127.0.0.1", "proxied", "wrong password!", "1.1.1.1, 203.0.113.9")).toBe(
      401,
    );
  expect(await rawLogin(s.url, "127.0.0.1", "proxied", PASSWORD, "203.0.113.9")).toBe(429);
  expect(await rawLogin(s.url, "127.0.0.1", "proxied", PASSWORD, "203.0.113.9, 198.51.100.7")).toBe(200);
});

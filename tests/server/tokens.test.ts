/**
 * The access/refresh token verifier (server/services/tokens.ts): a synchronous HS256 check that must
 * accept exactly what the server mints and refuse everything else a forger could try.
 */
import { expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { SignJWT } from "jose";
import { ApiError } from "../../core/protocol/index.ts";
import { TokenService } from "../../server/services/tokens.ts";

const secret = crypto.getRandomValues(new Uint8Array(32));
let now = Date.UTC(2026, 10, 23, 12);
const clock = { now: () => now };
const tokens = new TokenService(secret, clock);
const did = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

async function refusal(token: string, typ: "access" | "refresh" = "access"): Promise<string> {
  try {
    await tokens.verify(token, typ);
  } catch (e) {
    if (e instanceof ApiError) return `${e.code}`;
    throw e;
  }
  return "accepted";
}

/** A token signed with `key` (default: the server's secret) and any header and claims. */
async function forged(claims: Record<string, unknown>, header: Record<string, unknown>, key = secret) {
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

/** header.payload signed with the server's secret by hand (jose refuses to sign some headers). */
function signRaw(header: unknown, payload: unknown): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}

test("what the server mints verifies, with its claims", async () => {
  const access = await tokens.access(did, "sid-1");
  expect(await tokens.verify(access, "access")).toMatchObject({ did, sid: "sid-1", typ: "access" });
  const refresh = await tokens.refresh(did, "sid-1", "jti-1", now + 60_000);
  expect(await tokens.verify(refresh, "refresh")).toMatchObject({ jti: "jti-1", lim: now + 60_000 });
  // The other type is refused either way.
  expect(await refusal(access, "refresh")).toBe("Unauthorized");
  expect(await refusal(refresh, "access")).toBe("Unauthorized");
});

test("expiry: ExpiredToken once exp has passed, not before", async () => {
  const access = await tokens.access(did, "sid-1");
  now += 14 * 60_000;
  expect(await refusal(access)).toBe("accepted");
  now += 60_000;
  expect(await refusal(access)).toBe("ExpiredToken");
  now -= 15 * 60_000;
});

test("forgeries and malformed tokens are Unauthorized", async () => {
  const exp = Math.floor(now / 1000) + 600;
  const good = { sid: "s", typ: "access", iss: "wsync", sub: did, exp };
  const access = await tokens.access(did, "sid-1");
  const [h, p, sig] = access.split(".") as [string, string, string];
  const other = crypto.getRandomValues(new Uint8Array(32));
  const cases: [string, string][] = [
    ["another key", await forged(good, { alg: "HS256" }, other)],
    ["alg none", `${b64({ alg: "none" })}.${b64(good)}.`],
    ["alg HS512 under the same secret", await forged(good, { alg: "HS512" })],
    ["crit header", signRaw({ alg: "HS256", crit: ["x"], x: 1 }, good)],
    ["another typ header", await forged(good, { alg: "HS256", typ: "at+jwt" })],
    [
      "payload swapped under the old signature",
      `${h}.${b64({ ...good, sub: "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb" })}.${sig}`,
    ],
    ["signature cut short", `${h}.${p}.${sig.slice(0, 20)}`],
    ["signature missing", `${h}.${p}.`],
    ["two parts", `${h}.${p}`],
    ["four parts", `${access}.x`],
    ["not base64url", `${h}.${p}!.${sig}`],
    ["payload not an object", signRaw({ alg: "HS256" }, [1, 2])],
    ["another issuer", await forged({ ...good, iss: "other" }, { alg: "HS256" })],
    ["no exp", await forged({ ...good, exp: undefined }, { alg: "HS256" })],
    ["exp a string", await forged({ ...good, exp: String(exp) }, { alg: "HS256" })],
    ["nbf in the future", await forged({ ...good, nbf: exp }, { alg: "HS256" })],
    ["no sid", await forged({ ...good, sid: undefined }, { alg: "HS256" })],
    ["empty", ""],
    ["huge", "a".repeat(10_000)],
  ];
  for (const [name, token] of cases) expect(`${name}: ${await refusal(token)}`).toBe(`${name}: Unauthorized`);
  // The same claims signed right are accepted: each case above differs by what it names.
  expect(await refusal(await forged(good, { alg: "HS256", typ: "JWT" }))).toBe("accepted");
});

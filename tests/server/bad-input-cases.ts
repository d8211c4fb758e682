/**
 * The seeded generators of the bad-input barrage (tests/server/bad-input.test.ts), shared with the
 * fault suite's fuzz (tests/faults/fuzz.ts): malformed HTTP bodies, headers, tokens and paths,
 * WebSocket frames, the oracle that judges each answer, the world they aim at, and the snapshot.
 */
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { SignJWT } from "jose";
import { newLinkSecret, signObject } from "../../core/crypto/index.ts";
import {
  API_BASE,
  ClientFrames,
  ErrorStatus,
  Frame as FrameSchema,
  isErrorBody,
  Limits,
  type RouteName,
  Routes,
  type Session,
} from "../../core/protocol/index.ts";
import type { ManualClock, TestServer } from "./harness.ts";
import { ok } from "./harness.ts";
import { deletionBody, inviteBody, linkJoinBody, type Person, person, rotate, seal } from "./people.ts";

export const SEED = Number(process.env.WSYNC_FUZZ_SEED ?? 0x5eed_2026);
/** Statuses an error may carry (protocol §3); 500 is never acceptable for bad input. */
export const ERROR_STATUSES = new Set([400, 401, 403, 404, 409, 413, 422, 429]);
/** Bun's own cap on a request body (server/app.ts); beyond it Bun answers before the app runs. */
export const HARD_BODY_LIMIT = Limits.epochBodyMaxBytes + 64 * 1024;
export const MB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Seeded randomness

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** mulberry32: small, fast and good enough to pick test inputs. */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  bytes(n: number): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

export const CHAR_POOL = [
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/@#%+=~ ",
  '"',
  "\\",
  "\u0000",
  "\u0007",
  "\n",
  "\t",
  "é",
  "中",
  "😀",
  "\ud800",
  "\udfff",
  "\u2028",
  "\ufeff",
  "\u202e",
  "\uffff",
];

export const KEY_POOL = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "isAdmin",
  "$type",
  "a/b",
  "a~b",
  "a.b",
  "x",
  ...new Set(
    (Object.keys(Routes) as RouteName[]).flatMap((n) => {
      const b = Routes[n].body as { properties?: Record<string, unknown> } | null;
      return Object.keys(b?.properties ?? {});
    }),
  ),
];

export function randomString(rng: Rng, max = 40): string {
  const len = rng.chance(0.05) ? rng.int(400) : rng.int(max);
  let s = "";
  for (let i = 0; i < len; i++) s += rng.pick(CHAR_POOL);
  return s;
}

export const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  -1e-7,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  -1e308,
  5e-324,
];

/** Any JSON value: every type, nested, with hostile keys. Objects have no prototype, so "__proto__" is data. */
export function randomJson(rng: Rng, depth = 0): unknown {
  const roll = rng.int(depth > 3 ? 5 : 8);
  switch (roll) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.chance(0.5) ? rng.pick(NUMBERS) : rng.int(2000) - 1000;
    case 3:
    case 4:
      return randomString(rng);
    case 5:
    case 6: {
      const o: Record<string, unknown> = Object.create(null);
      const n = rng.int(6);
      for (let i = 0; i < n; i++) {
        o[rng.chance(0.7) ? rng.pick(KEY_POOL) : randomString(rng, 12)] = randomJson(rng, depth + 1);
      }
      return o;
    }
    default:
      return Array.from({ length: rng.int(5) }, () => randomJson(rng, depth + 1));
  }
}

// ---------------------------------------------------------------------------------------------
// Schemas as the oracle: what the server must say about a body follows from the route's schema.

export type BodyRoute = Exclude<
  RouteName,
  | "session"
  | "listSessions"
  | "refresh"
  | "weather"
  | "health"
  | "serverInfo"
  | "ready"
  | "keyBackupGet"
  | "keyBackupDelete"
  | "trustStateGet"
  | "deviceLinkFetch"
>;
export const ROUTE_NAMES = Object.keys(Routes) as RouteName[];
export const BODY_ROUTES = ROUTE_NAMES.filter((n) => Routes[n].body !== null) as BodyRoute[];
export const POST_ROUTES = ROUTE_NAMES.filter((n) => Routes[n].method === "POST");
export const GET_ROUTES = ROUTE_NAMES.filter((n) => Routes[n].method === "GET");
export const ACCESS_ROUTES = ROUTE_NAMES.filter((n) => Routes[n].auth === "access");
/** Paths followed by a parameter segment in some route (`/devices/link` of `/devices/link/:code`). */
export const PARAM_PREFIXES = ROUTE_NAMES.map((n) => Routes[n].path)
  .filter((p) => p.includes("/:"))
  .map((p) => p.slice(0, p.indexOf("/:")));
export const checks = Object.fromEntries(
  BODY_ROUTES.map((n) => [n, TypeCompiler.Compile(Routes[n].body as TSchema)]),
) as Record<BodyRoute, ReturnType<typeof TypeCompiler.Compile>>;
export const maxBytesOf = (n: RouteName) =>
  (Routes[n] as { maxBytes?: number }).maxBytes ?? Limits.bodyMaxBytes;
/** Routes whose success would change stored state: none of them may answer 200 to bad input. */
export const MUTATING = new Set<RouteName>([
  "register",
  "login",
  "refresh",
  "authorize",
  "logout",
  "savePublicKey",
  "createChannel",
  "joinChannel",
  "leaveChannel",
  "invite",
  "kick",
  "createEpoch",
  "send",
  "deleteMessage",
  "logoutCookie",
  "keyBackupPut",
  "trustStatePut",
  "deviceLinkOpen",
  "deviceLinkComplete",
  "botCreate",
  "botRevoke",
  "revokeSession",
  "accountDelete",
  // Not revokeOtherSessions: its only valid body is {}, and the fuzzer has no other session to end.
]);

/** The field a JSON pointer names, the way a client reads it in `message` ("commit.members.0.did"). */
export function dotted(path: (string | number)[]): string {
  return path.length === 0 ? "body" : path.map((p) => (p === "" ? '""' : p)).join(".");
}

/** Keys the server refuses anywhere in a body (server/http/body.ts: they crash Elysia's error builder). */
export const REFUSED_KEYS = ["toString", "valueOf"];

/** Paths of every refused key in the value. */
export function refusedKeyPaths(value: unknown, path: string[] = []): string[] {
  if (typeof value !== "object" || value === null) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (!Array.isArray(value) && REFUSED_KEYS.includes(k)) out.push([...path, k].join("."));
    out.push(...refusedKeyPaths(v, [...path, k]));
  }
  return out;
}

export const isPlainObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

export function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    max = Math.max(max, d);
    for (const c of Object.values(v)) stack.push([c, d + 1]);
  }
  return max;
}

// ---------------------------------------------------------------------------------------------
// Cases

export interface Answer {
  status: number;
  text: string;
  json: unknown;
  headers: Headers;
}

export interface HttpCase {
  /** Input class, for the summary and for reproducing. */
  kind: string;
  /** Route name, or a bucket such as "unknown-path" for the per-route status table. */
  bucket: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | (() => ReadableStream<Uint8Array>);
  /** Returns what is wrong with the answer, or null. The common invariants are checked separately. */
  judge(a: Answer): string | null;
  /** `path` is not under the API base. */
  fullPath?: boolean;
  /** Whether a 200 is acceptable (schema-valid input to a read-only route). */
  mayPass?: boolean;
  /** Bun answers this one itself (body over the server's hard cap): the status is all there is. */
  bare?: boolean;
}

export const errorIs =
  (status: number, codes: string[], messagePrefix?: string) =>
  (a: Answer): string | null => {
    if (a.status !== status) return `expected ${status}, got ${a.status}`;
    const body = a.json as { error?: string; message?: string };
    if (!codes.includes(body?.error ?? "")) return `expected ${codes.join("|")}, got ${body?.error}`;
    // Naming a member of the broken field ("deletion.v" for a broken "deletion") names it too.
    if (
      messagePrefix !== undefined &&
      !body.message?.startsWith(`${messagePrefix}: `) &&
      !body.message?.startsWith(`${messagePrefix}.`)
    )
      return `message should name "${messagePrefix}": ${JSON.stringify(body.message)}`;
    return null;
  };

export const oneOf =
  (statuses: number[]) =>
  (a: Answer): string | null =>
    statuses.includes(a.status) ? null : `expected one of ${statuses.join("/")}, got ${a.status}`;

export interface World {
  t: TestServer;
  victim: Person;
  fuzzer: Person;
  inviteChannel: { id: string; uri: string };
  secretChannel: { id: string; uri: string };
  messageUri: string;
  epochBody: { commit: unknown; signature: string; wrappedKeys: unknown[] };
  /** A v1-shaped commit for the same epoch (refused since protocol v2). */
  v1Commit: unknown;
  /** The victim's genuinely signed invite of the fuzzer to the invite channel, and deletion of messageUri. */
  signedInvite: { invite: unknown; signature: string };
  signedDeletion: { deletion: unknown; signature: string };
  /** The fuzzer's own signed read marker for the invite channel (it is no member there). */
  signedMarker: { marker: unknown; signature: string };
  /** A P-256 public key, base64 of the raw point (a device link's ephemeral key). */
  ephemeralKey: string;
  /** A link proof for the secret channel, as the fuzzer would make it (with a wrong link secret). */
  linkProof: unknown;
  /** Bad tokens by name; `expired` must answer ExpiredToken, the rest Unauthorized. */
  badAccess: Record<string, string>;
  badRefresh: Record<string, string>;
}

export function baseBodies(w: World): Record<BodyRoute, Record<string, unknown>> {
  const channelUri = w.inviteChannel.uri;
  return {
    register: { handle: "fuzz-new", email: "fuzz-new@example.com", password: "correct horse battery" },
    login: { identifier: "nobody.test", password: "correct horse battery" },
    authorize: { did: w.fuzzer.session.did, accessJwt: "not-a-token" },
    logout: { did: w.fuzzer.session.did, refreshJwt: "not-a-token" },
    savePublicKey: { publicKey: w.fuzzer.publicKey, replace: true },
    getKeys: { dids: [w.victim.session.did, w.fuzzer.session.did] },
    getChannels: {},
    getInvites: {},
    markRead: { channelUri, ...w.signedMarker },
    getReadMarkers: {},
    createChannel: { name: "fuzz", description: "d", type: "public" },
    joinChannel: { channelUri, joinToken: "tok", admission: w.linkProof },
    leaveChannel: { channelUri },
    invite: { channelUri, handle: "someone", ...w.signedInvite },
    resolveUser: { handle: "someone" },
    kick: { channelUri, did: w.victim.session.did },
    getMembers: { channelUri },
    getEpochKeys: { channelUri },
    getEpochInfo: { channelUri },
    createEpoch: { channelUri, ...w.epochBody },
    getMessages: { channelUri, limit: 10, cursor: "abc", since: 1 },
    send: { channelUri, content: "{}", clientMsgId: "0".repeat(32) },
    deleteMessage: { uri: w.messageUri, ...w.signedDeletion },
    logoutCookie: { did: w.fuzzer.session.did },
    revokeSession: { sessionId: "A".repeat(22) },
    revokeOtherSessions: {},
    // Not the fuzzer's password: a valid body that deletes nothing.
    accountDelete: { password: "not the fuzzer's password" },
    // Any value passes the schema; the server's own check (parseKeyBackup) refuses this one.
    keyBackupPut: { backup: { v: 1 } },
    // Likewise for the trust state (parseTrustStateBlob).
    trustStatePut: { blob: { v: 1 } },
    deviceLinkOpen: { code: "fuzz-link-0001", ephemeralPublicKey: w.ephemeralKey },
    deviceLinkLookup: { code: "fuzz-link-0001" },
    deviceLinkComplete: { code: "fuzz-link-0001", envelope: { v: 1, box: "AAAA" } },
    // The fuzzer is in none of the victim's channels: no mutation of this can make a bot.
    botCreate: { handle: "fuzzbot", publicKey: w.fuzzer.publicKey, channels: [channelUri] },
    botList: {},
    botRevoke: { handle: "nobot" },
    botSelf: {},
    dmOpen: { handles: ["someone"], name: "fuzz" },
    dmList: {},
    dmAccept: { channelUri },
    dmBlock: { did: w.fuzzer.session.did },
    dmUnblock: { did: w.victim.session.did },
  };
}

export const jsonHeaders = (token?: string): Record<string, string> => ({
  "content-type": "application/json",
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});

/** What a body route must answer to this body text, derived from the schema. */
export function expectationFor(
  route: BodyRoute,
  text: string,
  authed: boolean,
): { judge: HttpCase["judge"]; mayPass: boolean } {
  const limit = maxBytesOf(route);
  if (Buffer.byteLength(text) > limit) return { judge: errorIs(413, ["TooLarge"]), mayPass: false };
  let value: unknown;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { judge: errorIs(400, ["BadRequest"]), mayPass: false };
  }
  const needsToken = Routes[route].auth === "access";
  const schemaError = (field: string) => {
    const strict = errorIs(422, ["InvalidRequest"], field);
    // Validation runs before authentication, but either order is a correct answer without a token.
    return needsToken && !authed ? (a: Answer) => (a.status === 401 ? null : strict(a)) : strict;
  };
  if (depthOf(value) > 32) {
    const top = typeof value === "object" && value !== null && !Array.isArray(value);
    const field = top
      ? (Object.entries(value as object).find(([, v]) => depthOf(v) > 31)?.[0] ?? "body")
      : "body";
    return { judge: schemaError(field), mayPass: false };
  }
  const refused = refusedKeyPaths(value);
  if (refused.length > 0) {
    // Any of them may be the one named (the server walks the body in its own order).
    const judges = refused.map(schemaError);
    return {
      judge: (a) =>
        judges.some((j) => j(a) === null) ? null : `should name one of ${refused.join(", ")}: ${a.text}`,
      mayPass: false,
    };
  }
  if (!checks[route].Check(value)) {
    const first = checks[route].Errors(value).First();
    const field = first ? dotted(first.path.split("/").slice(1).map(unpointer)) : "body";
    return { judge: schemaError(field), mayPass: false };
  }
  // Schema-valid: the answer depends on the data; any protocol status will do, 200 only if harmless.
  return {
    judge: needsToken && !authed ? errorIs(401, ["Unauthorized"]) : () => null,
    mayPass: authed && !MUTATING.has(route),
  };
}

export const unpointer = (s: string) => s.replaceAll("~1", "/").replaceAll("~0", "~");

// ---- mutations of valid bodies, driven by the schema -----------------------------------------

export interface Site {
  path: (string | number)[];
  schema: TSchema & Record<string, unknown>;
  required: boolean;
}

export function sitesOf(
  schema: TSchema,
  value: unknown,
  path: (string | number)[],
  required: boolean,
): Site[] {
  const s = schema as Site["schema"];
  const out: Site[] = [{ path, schema: s, required }];
  if (s.type === "object" && s.properties && typeof value === "object" && value && !Array.isArray(value)) {
    const req = (s.required as string[] | undefined) ?? [];
    for (const [k, sub] of Object.entries(s.properties as Record<string, TSchema>)) {
      if (k in value)
        out.push(...sitesOf(sub, (value as Record<string, unknown>)[k], [...path, k], req.includes(k)));
    }
  } else if (s.type === "array" && Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push(...sitesOf(s.items as TSchema, v, [...path, i], false));
    });
  }
  return out;
}

export function setAt(root: Record<string, unknown>, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  let parent: Record<string | number, unknown> = root;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, unknown>;
  Object.defineProperty(parent, path[path.length - 1] as string | number, {
    value,
    enumerable: true,
    configurable: true,
    writable: true,
  });
  return root;
}

export function deleteAt(root: Record<string, unknown>, path: (string | number)[]): unknown {
  let parent: Record<string | number, unknown> = root;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, unknown>;
  delete parent[path[path.length - 1] as string | number];
  return root;
}

export const WRONG_TYPES: unknown[] = [123, -1.5, true, false, null, [], {}, "s", [1, "a"], { a: 1 }, 1e308];

/** Where a mutation puts a deep value: spliced into the text, which can nest deeper than JS recursion allows. */
export const DEEP_MARK = "\u0000deep\u0000";

/**
 * JSON nested past the server's limit. Sometimes 40,000+ levels: that is where JSON.stringify and
 * template strings overflow the stack, which is what made Elysia's ValidationError answer 500.
 */
export function deepText(rng: Rng): string {
  if (rng.chance(0.3)) {
    const depth = 40_000 + rng.int(70_000);
    return `${"[".repeat(depth)}1${"]".repeat(depth)}`;
  }
  let open = "";
  let close = "";
  for (let i = 40 + rng.int(200); i > 0; i--) {
    const array = rng.chance(0.5);
    open += array ? "[" : '{"a":';
    close = (array ? "]" : "}") + close;
  }
  return `${open}"x"${close}`;
}

/** Values that are objects with Object.prototype member names as their own keys. */
export const PROTO_OBJECTS = [
  '{"toString":1}',
  '{"toString":"x"}',
  '{"valueOf":{}}',
  '[{"toString":1}]',
  '[[{"toString":null}]]',
  '{"__proto__":{"toString":1}}',
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"isAdmin":true}}}',
  '{"hasOwnProperty":1,"toString":2,"valueOf":3}',
];

/** One schema-invalid variant of a valid body and the field the error must name. */
export function mutate(
  rng: Rng,
  route: BodyRoute,
  base: Record<string, unknown>,
): { kind: string; text: string; field: string } | null {
  const sites = sitesOf(Routes[route].body as TSchema, base, [], true);
  for (let attempt = 0; attempt < 20; attempt++) {
    const site = rng.pick(sites);
    const body = structuredClone(base);
    const kinds = ["wrong-type", "null", "unknown-key", "deep", "proto-object"];
    if (site.required && site.path.length > 0) kinds.push("missing");
    if (site.schema.type === "string") kinds.push("huge", "too-long", "pattern");
    if (site.schema.type === "array") kinds.push("empty-array", "too-many");
    if (site.schema.type === "integer") kinds.push("fraction", "out-of-range");
    const kind = rng.pick(kinds);
    let mutated: unknown;
    let field = dotted(site.path);
    switch (kind) {
      case "missing":
        mutated = deleteAt(body, site.path);
        break;
      case "wrong-type": {
        // A value of the same kind (another object, another array) fails inside it, not at the field.
        const kind = site.schema.type;
        const pool = WRONG_TYPES.filter(
          (v) => !(kind === "object" && isPlainObject(v)) && !(kind === "array" && Array.isArray(v)),
        );
        mutated = setAt(body, site.path, structuredClone(rng.pick(pool)));
        break;
      }
      case "null":
        mutated = setAt(body, site.path, null);
        break;
      case "unknown-key": {
        if (site.schema.type !== "object") continue;
        const target =
          site.path.length === 0
            ? body
            : (site.path.reduce<unknown>(
                (o, p) => (o as Record<string | number, unknown>)[p],
                body,
              ) as Record<string, unknown>);
        const key = rng.chance(0.8) ? rng.pick(KEY_POOL) : randomString(rng, 10);
        if (key === "" || Object.hasOwn(target, key)) continue;
        Object.defineProperty(target, key, {
          value: randomJson(rng, 3),
          enumerable: true,
          configurable: true,
          writable: true,
        });
        mutated = body;
        field = dotted([...site.path, key]);
        break;
      }
      case "deep":
        if (site.path.length === 0) continue;
        mutated = setAt(body, site.path, DEEP_MARK);
        // The depth guard names the top-level field the nesting hangs under.
        field = String(site.path[0]);
        break;
      case "proto-object":
        if (site.path.length === 0) continue;
        mutated = setAt(body, site.path, JSON.parse(rng.pick(PROTO_OBJECTS)));
        break;
      case "huge":
        mutated = setAt(body, site.path, "x".repeat(MB));
        break;
      case "too-long": {
        const max = site.schema.maxLength as number | undefined;
        if (max === undefined) continue;
        mutated = setAt(body, site.path, "a".repeat(max + 1));
        break;
      }
      case "pattern":
        if (site.schema.pattern === undefined && site.schema.minLength === undefined) continue;
        mutated = setAt(body, site.path, rng.pick(["", "NOT VALID ✗", " ", "did:plc:UPPER", "\u0000"]));
        break;
      case "empty-array":
        mutated = setAt(body, site.path, []);
        break;
      case "too-many": {
        const max = site.schema.maxItems as number | undefined;
        if (max === undefined) continue;
        const item = (
          site.path.reduce<unknown>((o, p) => (o as Record<string | number, unknown>)[p], body) as unknown[]
        )[0];
        mutated = setAt(
          body,
          site.path,
          Array.from({ length: max + 1 }, () => item),
        );
        break;
      }
      case "fraction":
        mutated = setAt(body, site.path, 1.5);
        break;
      case "out-of-range":
        mutated = setAt(body, site.path, rng.pick([-1, 1e6, -(2 ** 53)]));
        break;
    }
    let text = JSON.stringify(mutated);
    if (kind === "deep") {
      text = text.replace(JSON.stringify(DEEP_MARK), deepText(rng));
      return { kind: `mutation:${kind}`, text, field };
    }
    const value = JSON.parse(text);
    // Only invalid variants count (null is fine for a nullable field, a string for a string…).
    if (depthOf(value) > 32 || checks[route].Check(value)) continue;
    const refused = refusedKeyPaths(value);
    if (kind === "proto-object" && refused.length > 0) {
      // The server refuses these keys wherever they are, and names the first it meets.
      if (refused.length > 1) continue;
      field = refused[0] as string;
    } else if (refused.length > 0 && !(refused.length === 1 && refused[0] === field)) {
      // A refused key inside random filler would be named instead of the mutated field.
      continue;
    }
    return { kind: `mutation:${kind}`, text, field };
  }
  return null;
}

// ---- non-JSON bodies ---------------------------------------------------------------------------

export const SYNTAX_GARBAGE = [
  "{abc",
  "{'a':1}",
  "NaN",
  "Infinity",
  "-Infinity",
  "undefined",
  "{a:1}",
  "[1,]",
  '{"a":1,}',
  "{} {}",
  "{}x",
  "// c\n{}",
  "/* */{}",
  "\u0000",
  '{"a":"\u0001"}',
  "0x10",
  "01",
  "+1",
  ".5",
  '"unterminated',
  '{"a":1}}',
  "tru",
  "nul",
  '{"a" 1}',
  "[1 2]",
  '"\\x41"',
  "<xml/>",
  "a=b&c=d",
  "--boundary\r\nContent-Disposition: form-data\r\n\r\nx\r\n--boundary--",
  '{"handle":"\\ud800',
  "\\",
  "{",
  "}",
  "[",
  '{"__proto__":',
];

export const INVALID_UTF8 = [
  [0xff],
  [0xc0, 0xaf],
  [0x80],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xfe, 0xff],
];

export function isJsonText(bytes: Uint8Array): boolean {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    if (text.trim() === "") return true;
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function nonJson(rng: Rng, base: Record<string, unknown>): { kind: string; bytes: Uint8Array } {
  const enc = new TextEncoder();
  for (;;) {
    let kind: string;
    let bytes: Uint8Array;
    switch (rng.int(4)) {
      case 0:
        kind = "random-bytes";
        bytes = rng.bytes(1 + rng.int(200));
        break;
      case 1: {
        kind = "invalid-utf8";
        const bad = rng.pick(INVALID_UTF8);
        const key = rng.pick(Object.keys(base).concat("x"));
        bytes = new Uint8Array([...enc.encode(`{"${key}":"a`), ...bad, ...enc.encode('"}')]);
        break;
      }
      case 2: {
        kind = "truncated";
        const text = JSON.stringify(base);
        bytes = enc.encode(text.slice(0, 1 + rng.int(Math.max(1, text.length - 1))));
        break;
      }
      default:
        kind = "syntax";
        bytes = enc.encode(rng.pick(SYNTAX_GARBAGE));
    }
    if (!isJsonText(bytes)) return { kind, bytes };
  }
}

export const CONTENT_TYPES = [
  null,
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data",
  "multipart/form-data; boundary=xyz",
  "application/octet-stream",
  "application/json; charset=utf-16",
  "image/png",
  "application/json, text/html",
  "x/y;;;==",
  "a".repeat(1000),
  "",
];

// ---- tokens ------------------------------------------------------------------------------------

export const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

export function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split(".")[1] as string, "base64url").toString("utf8"));
}

/** The server's signing key, to mint tokens with a valid signature but wrong claims. */
export function serverJwtKey(t: TestServer): Uint8Array {
  const key = (t.services.auth as unknown as { d?: { tokens?: { secret?: unknown } } }).d?.tokens?.secret;
  if (!(key instanceof Uint8Array)) throw new Error("AuthService internals changed: update serverJwtKey()");
  return key;
}

export async function sign(
  key: Uint8Array,
  claims: Record<string, unknown>,
  opts: { alg?: string; iss?: string | null; exp?: number; nbf?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: opts.alg ?? "HS256", typ: "JWT" })
    .setIssuedAt(now);
  if (opts.iss !== null) jwt.setIssuer(opts.iss ?? "wsync");
  jwt.setExpirationTime(opts.exp ?? now + 600);
  if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
  return jwt.sign(key);
}

/** Flips one character in the middle of a segment, keeping the base64url alphabet. */
export function tamper(jwt: string, segment: 1 | 2): string {
  const parts = jwt.split(".");
  const s = parts[segment] as string;
  const i = Math.floor(s.length / 2);
  parts[segment] = s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
  return parts.join(".");
}

export async function makeBadTokens(
  t: TestServer,
  clock: ManualClock,
  fuzzer: Session,
  victim: Session,
  expired: Session,
  loggedOut: Session,
): Promise<{ access: Record<string, string>; refresh: Record<string, string> }> {
  const key = serverJwtKey(t);
  const otherKey = crypto.getRandomValues(new Uint8Array(32));
  const f = claimsOf(fuzzer.accessJwt);
  const v = claimsOf(victim.accessJwt);
  const nowSec = Math.floor(clock.now() / 1000);
  const good = { sub: fuzzer.did, sid: f.sid, typ: "access" };
  const access: Record<string, string> = {
    garbage: "abc",
    dots: "a.b.c",
    empty_segments: "..",
    long: "x".repeat(8000),
    forged: await sign(otherKey, good),
    alg_none: `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ ...good, iss: "wsync", exp: nowSec + 600 })}.`,
    alg_none_sig: `${b64url({ alg: "none" })}.${b64url({ ...good, iss: "wsync", exp: nowSec + 600 })}.${fuzzer.accessJwt.split(".")[2]}`,
    hs512: await sign(key, good, { alg: "HS512", exp: nowSec + 600 }),
    tampered_payload: tamper(fuzzer.accessJwt, 1),
    tampered_signature: tamper(fuzzer.accessJwt, 2),
    refresh_as_access: fuzzer.refreshJwt,
    typ_admin: await sign(key, { ...good, typ: "admin" }, { exp: nowSec + 600 }),
    typ_missing: await sign(key, { sub: fuzzer.did, sid: f.sid }, { exp: nowSec + 600 }),
    sid_missing: await sign(key, { sub: fuzzer.did, typ: "access" }, { exp: nowSec + 600 }),
    sub_missing: await sign(key, { sid: f.sid, typ: "access" }, { exp: nowSec + 600 }),
    sub_number: await sign(key, { ...good, sub: 5 }, { exp: nowSec + 600 }),
    wrong_issuer: await sign(key, good, { iss: "evil", exp: nowSec + 600 }),
    no_issuer: await sign(key, good, { iss: null, exp: nowSec + 600 }),
    unknown_session: await sign(key, { ...good, sid: "no-such-session" }, { exp: nowSec + 600 }),
    someone_elses_session: await sign(key, { ...good, sid: v.sid }, { exp: nowSec + 600 }),
    not_yet_valid: await sign(key, good, { exp: nowSec + 600, nbf: nowSec + 300 }),
    logged_out: loggedOut.accessJwt,
    expired: expired.accessJwt,
  };
  const goodRefresh = { sub: fuzzer.did, sid: f.sid, typ: "refresh", jti: "x" };
  const refresh: Record<string, string> = {
    garbage: "abc",
    access_as_refresh: fuzzer.accessJwt,
    forged: await sign(otherKey, goodRefresh),
    alg_none: `${b64url({ alg: "none" })}.${b64url({ ...goodRefresh, iss: "wsync", exp: nowSec + 600 })}.`,
    tampered_signature: tamper(fuzzer.refreshJwt, 2),
    jti_missing: await sign(key, { ...goodRefresh, jti: undefined }, { exp: nowSec + 600 }),
    // Signed right but not the session's current jti: reuse detection would revoke the session, so
    // this one names the session that is already logged out.
    wrong_jti: await sign(
      key,
      { ...goodRefresh, sid: claimsOf(loggedOut.refreshJwt).sid },
      { exp: nowSec + 600 },
    ),
    unknown_session: await sign(key, { ...goodRefresh, sid: "nope" }, { exp: nowSec + 600 }),
    logged_out: loggedOut.refreshJwt,
    expired: await sign(key, goodRefresh, { exp: nowSec - 10 }),
  };
  return { access, refresh };
}

// ---------------------------------------------------------------------------------------------
// Building the HTTP barrage

export function buildHttpCases(w: World, rng: Rng): HttpCase[] {
  const cases: HttpCase[] = [];
  const bases = baseBodies(w);
  const token = w.fuzzer.token;
  const withBody = (
    kind: string,
    route: BodyRoute,
    text: string,
    authed: boolean,
    contentType: string | null = "application/json",
  ): HttpCase => {
    const { judge, mayPass } = expectationFor(route, text, authed);
    const headers: Record<string, string> = authed ? { authorization: `Bearer ${token}` } : {};
    if (contentType !== null) headers["content-type"] = contentType;
    return {
      kind,
      bucket: route,
      method: Routes[route].method,
      path: Routes[route].path,
      headers,
      // Bytes, so fetch adds no content-type of its own.
      body: new TextEncoder().encode(text),
      judge,
      mayPass,
    };
  };

  for (const route of BODY_ROUTES) {
    const base = bases[route];
    const authed = () => Routes[route].auth === "access" && rng.chance(0.85);
    // Random JSON values of every type.
    for (let i = 0; i < 30; i++) {
      const value = rng.chance(0.6) ? { ...base, ...(randomJson(rng) as object) } : randomJson(rng);
      const text = JSON.stringify(value) ?? "null";
      // A valid body for a route that changes state would really change it: draw again.
      if (MUTATING.has(route) && checks[route].Check(JSON.parse(text))) {
        i--;
        continue;
      }
      cases.push(withBody("random-json", route, text, authed()));
    }
    // The empty body is `{}`.
    cases.push(withBody("empty-body", route, "", authed()));
    // Valid bodies with one field mutated.
    for (let i = 0; i < 60; i++) {
      const m = mutate(rng, route, base);
      if (!m) continue;
      const isAuthed = authed() || Routes[route].auth !== "access";
      const c = withBody(m.kind, route, m.text, isAuthed);
      const limit = maxBytesOf(route);
      if (Buffer.byteLength(m.text) > limit) c.judge = errorIs(413, ["TooLarge"]);
      else {
        const strict = errorIs(422, ["InvalidRequest"], m.field);
        c.judge = isAuthed ? strict : (a) => (a.status === 401 ? null : strict(a));
      }
      cases.push(c);
    }
    // Bytes that are not JSON, or not UTF-8.
    for (let i = 0; i < 12; i++) {
      const nj = nonJson(rng, base);
      const c: HttpCase = {
        kind: `non-json:${nj.kind}`,
        bucket: route,
        method: Routes[route].method,
        path: Routes[route].path,
        headers: jsonHeaders(authed() ? token : undefined),
        body: nj.bytes,
        judge: errorIs(400, ["BadRequest"]),
      };
      cases.push(c);
    }
    // Wrong or missing content types: the body is read as JSON whatever it claims to be.
    for (let i = 0; i < 8; i++) {
      const ct = rng.pick(CONTENT_TYPES);
      const text = rng.chance(0.5)
        ? (mutate(rng, route, base)?.text ?? "{")
        : new TextDecoder().decode(nonJson(rng, base).bytes);
      cases.push(
        withBody(`content-type:${ct === null ? "none" : ct.slice(0, 40)}`, route, text, authed(), ct),
      );
    }
    // Oversized: declared length just over the limit, and streamed without a length.
    const limit = maxBytesOf(route);
    const over = `{"pad":"${"x".repeat(limit + rng.int(1000))}"}`;
    cases.push({ ...withBody("oversized:declared", route, over, true), judge: errorIs(413, ["TooLarge"]) });
    cases.push({
      kind: "oversized:chunked",
      bucket: route,
      method: Routes[route].method,
      path: Routes[route].path,
      headers: jsonHeaders(token),
      body: () => chunkedStream(limit + 1 + rng.int(50_000)),
      judge: errorIs(413, ["TooLarge"]),
    });
  }

  // The byte limit is exact: a body of exactly the limit is read (and refused by the schema).
  for (const route of ["register", "createEpoch"] as const) {
    const limit = maxBytesOf(route);
    const empty = JSON.stringify({ ...bases[route], pad: "" });
    const exact = JSON.stringify({ ...bases[route], pad: "x".repeat(limit - Buffer.byteLength(empty)) });
    if (Buffer.byteLength(exact) !== limit)
      throw new Error(`exact-limit body is ${Buffer.byteLength(exact)} bytes, not ${limit}`);
    cases.push({
      ...withBody("size:exact-limit", route, exact, true),
      judge: errorIs(422, ["InvalidRequest"], "pad"),
    });
  }
  // Over Bun's own cap Bun answers 413 before the app runs, without a JSON body (see the report).
  for (const route of ["send", "createEpoch"] as const) {
    cases.push({
      ...withBody("oversized:hard-limit", route, `{"pad":"${"x".repeat(HARD_BODY_LIMIT)}"}`, true),
      judge: oneOf([413]),
      bare: true,
    });
  }

  // Routes without a body schema: session, refresh. A body is still read as JSON, then ignored.
  for (const route of ["session", "refresh"] as const) {
    for (let i = 0; i < 30; i++) {
      const nj = rng.chance(0.5);
      const useToken = route === "session" && rng.chance(0.5);
      cases.push({
        kind: nj ? "no-body-route:non-json" : "no-body-route:random-json",
        bucket: route,
        method: "POST",
        path: Routes[route].path,
        headers: {
          "content-type": rng.pick(["application/json", "text/plain", "multipart/form-data"]),
          ...(useToken ? { authorization: `Bearer ${token}` } : {}),
        },
        body: nj
          ? nonJson(rng, {}).bytes
          : new TextEncoder().encode(JSON.stringify(randomJson(rng)) ?? "null"),
        // Read like any body (400 not JSON, 422 refused shape), then authentication decides.
        judge: oneOf(useToken ? [200, 400, 422] : [400, 401, 422]),
        mayPass: useToken,
      });
    }
  }

  // Bad tokens on every route that needs one, with a schema-valid body so authentication is reached.
  const headerOnly = [
    "",
    "Bearer",
    "Bearer ",
    "Bearer  ",
    "Basic dXNlcjpwYXNz",
    "Token abc",
    "Bearer a b",
    `Bearer ${token} x`,
  ];
  for (const route of ACCESS_ROUTES) {
    const def = Routes[route];
    const body = def.body === null ? "" : JSON.stringify(bases[route as BodyRoute]);
    const push = (kind: string, authorization: string | null, judge: HttpCase["judge"]) =>
      cases.push({
        kind,
        bucket: route,
        method: def.method,
        path: def.path,
        headers: { "content-type": "application/json", ...(authorization === null ? {} : { authorization }) },
        // GET and DELETE carry no body.
        ...(def.method === "GET" || def.method === "DELETE" ? {} : { body: new TextEncoder().encode(body) }),
        judge,
      });
    push("token:none", null, errorIs(401, ["Unauthorized"]));
    for (const h of headerOnly) push(`token:header:${h.slice(0, 12)}`, h, errorIs(401, ["Unauthorized"]));
    for (const [name, tok] of Object.entries(w.badAccess)) {
      push(
        `token:${name}`,
        `Bearer ${tok}`,
        errorIs(401, [name === "expired" ? "ExpiredToken" : "Unauthorized"]),
      );
    }
  }
  for (const [name, tok] of Object.entries(w.badRefresh)) {
    cases.push({
      kind: `refresh-token:${name}`,
      bucket: "refresh",
      method: "POST",
      path: Routes.refresh.path,
      headers: { authorization: `Bearer ${tok}` },
      judge: errorIs(401, [name === "expired" ? "ExpiredToken" : "Unauthorized"]),
    });
  }
  cases.push({
    kind: "refresh-token:none",
    bucket: "refresh",
    method: "POST",
    path: Routes.refresh.path,
    headers: {},
    judge: errorIs(401, ["Unauthorized"]),
  });
  for (const [name, tok] of Object.entries(w.badAccess)) {
    const text = JSON.stringify({ did: w.fuzzer.session.did, accessJwt: tok });
    cases.push({ ...withBody(`authorize:${name}`, "authorize", text, false), judge: oneOf([401, 422]) });
  }
  // A valid token for someone else's did.
  cases.push({
    ...withBody(
      "authorize:other-did",
      "authorize",
      JSON.stringify({ did: w.victim.session.did, accessJwt: token }),
      false,
    ),
    judge: errorIs(401, ["Unauthorized"]),
  });
  for (const [name, tok] of Object.entries(w.badRefresh)) {
    if (name === "expired") continue; // logging out of an expired session is a harmless success
    const text = JSON.stringify({ did: w.fuzzer.session.did, refreshJwt: tok });
    cases.push({ ...withBody(`logout:${name}`, "logout", text, false), judge: oneOf([401, 422]) });
  }
  cases.push({
    ...withBody(
      "logout:other-did",
      "logout",
      JSON.stringify({ did: w.victim.session.did, refreshJwt: w.fuzzer.session.refreshJwt }),
      false,
    ),
    judge: errorIs(401, ["Unauthorized"]),
  });

  // Schema-valid but meaningless data, with a valid token: never a state change, never a 500.
  const randomChannelId = () =>
    Array.from({ length: 16 }, () => rng.pick([..."abcdefghijklmnopqrstuvwxyz234567"])).join("");
  const semantic = (route: BodyRoute, body: Record<string, unknown>, judge: HttpCase["judge"]) => {
    const c = withBody(`semantic:${route}`, route, JSON.stringify(body), true);
    c.judge = judge;
    cases.push(c);
  };
  for (const route of [
    "getMembers",
    "getEpochKeys",
    "getEpochInfo",
    "leaveChannel",
    "getMessages",
  ] as const) {
    semantic(route, { channelUri: w.inviteChannel.uri }, errorIs(403, ["Forbidden"]));
    semantic(route, { channelUri: w.secretChannel.uri }, errorIs(404, ["NotFound"]));
    semantic(
      route,
      { channelUri: `at://${w.victim.session.did}/chat.wsync.channel/${randomChannelId()}` },
      errorIs(404, ["NotFound"]),
    );
    semantic(route, { channelUri: randomString(rng, 20) || "x" }, oneOf([404, 422]));
    semantic(route, { channelUri: `${w.inviteChannel.id}/` }, errorIs(403, ["Forbidden"]));
  }
  semantic("joinChannel", { channelUri: w.inviteChannel.uri }, errorIs(403, ["InviteRequired"]));
  semantic("joinChannel", { channelUri: w.secretChannel.uri }, errorIs(404, ["NotFound"]));
  semantic(
    "joinChannel",
    { channelUri: w.secretChannel.uri, joinToken: "wrong-token" },
    errorIs(404, ["NotFound"]),
  );
  // A wrong token is NotFound whatever the admission says: nothing about the body reveals the channel.
  semantic(
    "joinChannel",
    { channelUri: w.secretChannel.uri, joinToken: "A".repeat(43), admission: w.linkProof },
    errorIs(404, ["NotFound"]),
  );
  semantic("joinChannel", { channelUri: randomChannelId() }, errorIs(404, ["NotFound"]));
  semantic(
    "joinChannel",
    { channelUri: "at://x/chat.wsync.channel/NOTANID" },
    errorIs(422, ["InvalidRequest"], "channelUri"),
  );
  semantic(
    "send",
    { channelUri: w.inviteChannel.uri, content: "{}", clientMsgId: "a".repeat(32) },
    errorIs(403, ["Forbidden"]),
  );
  semantic(
    "send",
    {
      channelUri: w.inviteChannel.uri,
      content: "x".repeat(Limits.contentMaxChars + 1),
      clientMsgId: "a".repeat(32),
    },
    errorIs(413, ["TooLarge"]),
  );
  semantic("createEpoch", { channelUri: w.inviteChannel.uri, ...w.epochBody }, errorIs(403, ["Forbidden"]));
  semantic("createEpoch", { channelUri: w.secretChannel.uri, ...w.epochBody }, errorIs(404, ["NotFound"]));
  semantic(
    "createEpoch",
    { channelUri: w.inviteChannel.uri, ...w.epochBody, commit: w.v1Commit },
    errorIs(422, ["InvalidRequest"], "commit.v"),
  );
  semantic("resolveUser", { handle: "no-such-user" }, errorIs(404, ["NotFound"]));
  semantic("resolveUser", { handle: "-bad-" }, errorIs(404, ["NotFound"]));
  semantic(
    "kick",
    { channelUri: w.inviteChannel.uri, did: w.victim.session.did },
    errorIs(403, ["Forbidden"]),
  );
  semantic(
    "invite",
    { channelUri: w.inviteChannel.uri, handle: w.fuzzer.session.handle, ...w.signedInvite },
    errorIs(403, ["Forbidden"]),
  );
  semantic(
    "invite",
    { channelUri: w.secretChannel.uri, handle: w.fuzzer.session.handle, ...w.signedInvite },
    errorIs(404, ["NotFound"]),
  );
  // The victim's genuinely signed deletion, replayed by a non-member: the message stays.
  semantic("deleteMessage", { uri: w.messageUri, ...w.signedDeletion }, errorIs(404, ["NotFound"]));
  semantic(
    "deleteMessage",
    { uri: "at://nobody/chat.wsync.message/x", ...w.signedDeletion },
    errorIs(422, ["InvalidRequest"], "uri"),
  );
  semantic(
    "getMessages",
    { channelUri: w.inviteChannel.uri, since: Number.MAX_SAFE_INTEGER },
    errorIs(403, ["Forbidden"]),
  );
  for (const publicKey of [
    "",
    "AAAA",
    Buffer.alloc(65).toString("base64"),
    Buffer.from([4, ...new Uint8Array(64).fill(1)]).toString("base64"),
    Buffer.from([2, ...new Uint8Array(32).fill(7)]).toString("base64"),
    Buffer.from([4, ...new Uint8Array(64).fill(255)]).toString("base64"),
    `${w.fuzzer.publicKey.slice(0, -4)}AAAA`,
  ]) {
    semantic("savePublicKey", { publicKey, replace: true }, errorIs(422, ["InvalidRequest"], "publicKey"));
  }
  for (const handle of [
    "a",
    "-abc",
    "abc-",
    "ab_c",
    "x".repeat(33),
    "Ünïcode",
    "a b c",
    "abc.example.com",
    ".test",
    "abc.test.test",
  ]) {
    semantic(
      "register",
      { handle, email: "fresh@example.com", password: "correct horse battery" },
      errorIs(422, ["InvalidRequest"], "handle"),
    );
  }
  semantic(
    "register",
    { handle: "fresh-one", email: "fresh@example.com", password: "short" },
    errorIs(422, ["WeakPassword"]),
  );
  semantic(
    "register",
    { handle: "fresh-one", email: "fresh@example.com", password: "password123" },
    errorIs(422, ["WeakPassword"]),
  );
  semantic(
    "register",
    { handle: w.victim.session.handle, email: "fresh@example.com", password: "correct horse battery" },
    errorIs(409, ["HandleTaken"]),
  );
  semantic(
    "register",
    {
      handle: w.victim.session.handle.toUpperCase(),
      email: "fresh@example.com",
      password: "correct horse battery",
    },
    errorIs(409, ["HandleTaken"]),
  );
  semantic(
    "register",
    { handle: "fresh-one", email: w.victim.session.email.toUpperCase(), password: "correct horse battery" },
    errorIs(409, ["EmailTaken"]),
  );
  for (let i = 0; i < 20; i++) {
    const dids = Array.from(
      { length: rng.int(20) },
      () => `did:plc:${randomChannelId()}${randomChannelId().slice(0, 8)}`,
    );
    const c = withBody("semantic:getKeys", "getKeys", JSON.stringify({ dids }), true);
    c.judge = (a) =>
      a.status === 200 && (a.json as { keys: unknown[] }).keys.length === 0
        ? null
        : `expected no keys, got ${a.text.slice(0, 100)}`;
    cases.push(c);
  }

  // Unknown paths and wrong methods: 404 with a NotFound body.
  const notFound = errorIs(404, ["NotFound"]);
  const methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
  for (let i = 0; i < 150; i++) {
    const segs = Array.from(
      { length: 1 + rng.int(3) },
      // Without dots: a ".." segment would climb to a known path.
      () => uriSafe(randomString(rng, 12).replaceAll(".", "")).slice(0, 60) || "x",
    );
    const path = rng.pick([
      `/zz-${segs.join("/")}`,
      `/auth/zz-${segs[0]}`,
      `/channel/zz-${segs[0]}`,
      // Not under a path whose next segment is a route's parameter (`/devices/link/:code`).
      `${rng.pick(POST_ROUTES.map((n) => Routes[n].path).filter((p) => !PARAM_PREFIXES.includes(p)))}/zz-${segs[0]}`,
      `/${segs[0]}-zz`,
    ]);
    cases.push({
      kind: "unknown-path",
      bucket: "unknown-path",
      method: rng.pick(methods),
      path,
      headers: jsonHeaders(rng.chance(0.5) ? token : undefined),
      body: undefined,
      judge: notFound,
    });
  }
  for (const p of [
    "/api/Auth/Login",
    "/api/HEALTH",
    "/api/ws/x",
    "/api",
    "/api/auth",
    "/api/channel",
    "/api/%00",
  ]) {
    cases.push({
      kind: "unknown-path:fixed",
      bucket: "unknown-path",
      method: "GET",
      path: p,
      headers: {},
      judge: notFound,
      fullPath: true,
    });
  }
  // Outside /api the web app renders pages (its own 404s); the JSON contract does not apply, no 500 does.
  for (const p of [
    "/API/HEALTH",
    "/favicon.ico",
    "/sync/%ff",
    `/sync/${"x".repeat(2000)}`,
    "/assets/../api/health",
    "/assets/%2e%2e/x",
  ]) {
    cases.push({
      kind: "web-path",
      bucket: "web-path",
      method: "GET",
      path: p,
      headers: {},
      judge: (a) => (a.status < 500 ? null : `status ${a.status}`),
      mayPass: true,
      bare: true,
      fullPath: true,
    });
  }
  // A method is wrong for a path only when no route serves it there (GET, PUT and DELETE share
  // /keys/backup), and each wrong (method, path) pair is tried once.
  const served = new Set(ROUTE_NAMES.map((n) => `${Routes[n].method} ${Routes[n].path}`));
  const wrongMethod = (method: string, route: RouteName) => {
    const key = `${method} ${Routes[route].path}`;
    if (served.has(key)) return false;
    served.add(key);
    return true;
  };
  for (const route of ROUTE_NAMES.filter((n) => Routes[n].method !== "GET")) {
    for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
      if (!wrongMethod(method, route)) continue;
      cases.push({
        kind: `wrong-method:${method}`,
        bucket: route,
        method,
        path: Routes[route].path,
        headers: jsonHeaders(token),
        judge: notFound,
      });
    }
  }
  for (const route of GET_ROUTES) {
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      if (!wrongMethod(method, route)) continue;
      cases.push({
        kind: `wrong-method:${method}`,
        bucket: route,
        method,
        path: Routes[route].path,
        headers: jsonHeaders(),
        body: method === "POST" ? "{}" : undefined,
        judge: notFound,
      });
    }
    // GET routes ignore junk headers and query strings; one that needs a session refuses the junk token.
    for (let i = 0; i < 10; i++) {
      const [badName, badToken] = rng.pick(Object.entries(w.badAccess)) as [string, string];
      cases.push({
        kind: "get:junk-headers",
        bucket: route,
        method: "GET",
        path: `${Routes[route].path}?${uriSafe(randomString(rng))}=${uriSafe(randomString(rng))}`,
        headers: {
          authorization: `Bearer ${badToken}`,
          "content-type": rng.pick(CONTENT_TYPES) ?? "x",
        },
        judge:
          Routes[route].auth === "access"
            ? errorIs(401, [badName === "expired" ? "ExpiredToken" : "Unauthorized"])
            : oneOf([200]),
        mayPass: true,
      });
    }
  }
  // Shuffle, so that slow cases spread over the pool and no route's cases run back to back.
  for (let i = cases.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [cases[i], cases[j]] = [cases[j] as HttpCase, cases[i] as HttpCase];
  }
  return cases;
}

/** encodeURIComponent, after dropping the lone surrogates it refuses. */
export function uriSafe(s: string): string {
  return encodeURIComponent(
    s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, ""),
  );
}

export function chunkedStream(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      c.enqueue(chunk);
      sent += chunk.length;
    },
  });
}

export async function run(url: string, c: HttpCase): Promise<Answer> {
  const full = c.fullPath ? c.path : API_BASE + c.path;
  const body = typeof c.body === "function" ? c.body() : c.body;
  const res = await fetch(url + full, {
    method: c.method,
    headers: c.headers,
    body: c.method === "GET" ? undefined : body,
    ...(typeof c.body === "function" ? { duplex: "half" } : {}),
    // A request the server never answers is a finding too, not a test timeout.
    signal: AbortSignal.timeout(15_000),
  } as RequestInit);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

/** What every answer must satisfy, whatever the input. */
export function invariantViolation(c: HttpCase, a: Answer): string | null {
  if (a.status === 500) return "500";
  if (c.bucket === "web-path") return null;
  if (a.status === 200) return c.mayPass ? null : "200 for bad input";
  if (!ERROR_STATUSES.has(a.status)) return `status ${a.status} is not in the protocol table`;
  if (c.bare) return null;
  if (!a.headers.get("content-type")?.includes("application/json"))
    return "error without a JSON content type";
  if (!isErrorBody(a.json)) return `not an {error, message} body: ${a.text.slice(0, 80)}`;
  const expected = ErrorStatus[a.json.error];
  if (expected !== a.status) return `${a.json.error} travels with ${expected}, not ${a.status}`;
  if (/\bat .+:\d+:\d+|node_modules|\/work\//.test(a.json.message)) return "message leaks internals";
  return null;
}

export function describeCase(c: HttpCase): string {
  let body = "";
  if (typeof c.body === "string") body = c.body;
  else if (c.body instanceof Uint8Array) body = Buffer.from(c.body.slice(0, 300)).toString("latin1");
  else if (c.body) body = "<stream>";
  const headers = {
    ...c.headers,
    ...(c.headers.authorization ? { authorization: `${c.headers.authorization.slice(0, 24)}…` } : {}),
  };
  return `${c.method} ${c.path.slice(0, 80)} ${JSON.stringify(headers).slice(0, 160)} ${JSON.stringify(body.slice(0, 600))}`;
}

export async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// WebSocket cases

export interface WsCase {
  kind: string;
  /** Text or bytes to send. */
  payload: string | Uint8Array<ArrayBuffer>;
  /** The id the error must carry: the frame's own id when it had a well-formed one. */
  id?: string;
  /** Error codes acceptable for this frame (null: any protocol error code except InternalError). */
  codes: string[] | null;
  /** The error message must begin with this field name. */
  field?: string;
}

export const PROTO_TYPES = [
  "constructor",
  "__proto__",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "isPrototypeOf",
  "__defineGetter__",
  "propertyIsEnumerable",
];
export const frameCheck = TypeCompiler.Compile(FrameSchema);
export const pingCheck = TypeCompiler.Compile(ClientFrames.ping);
export const OTHER_TYPES = [
  "auth",
  "ready",
  "ack",
  "error",
  "channel:joined",
  "epoch:created",
  "PING",
  "ping ",
  "channel:join:x",
  "x",
];

export function buildWsCases(w: World, rng: Rng, n: number): WsCase[] {
  const out: WsCase[] = [];
  let seq = 0;
  const nextId = () => `f${++seq}-${randomString(rng, 6).replace(/[^a-z0-9]/gi, "")}`.slice(0, 64);
  const channelUri = w.inviteChannel.uri;
  const validData: Record<string, Record<string, unknown>> = {
    ping: {},
    "channel:join": { channelUri, joinToken: "tok", admission: w.linkProof },
    "channel:leave": { channelUri },
    "channel:message": { channelUri, content: "{}", clientMsgId: "0".repeat(32) },
  };
  while (out.length < n) {
    const roll = rng.int(10);
    if (roll === 0) {
      // Not JSON at all.
      out.push({
        kind: "ws:not-json",
        payload: rng.pick(SYNTAX_GARBAGE) + randomString(rng, 5),
        codes: ["BadRequest"],
      });
    } else if (roll === 1) {
      // Any JSON value; when it happens to be an object with a usable id, the error must carry it.
      const v = randomJson(rng) as Record<string, unknown>;
      const withId = rng.chance(0.5) && typeof v === "object" && v !== null && !Array.isArray(v);
      if (withId) v.id = nextId();
      if (withId && rng.chance(0.5)) v.type = rng.pick(["ping", "channel:join", "x"]);
      const text = JSON.stringify(v) ?? "null";
      const parsed = JSON.parse(text);
      // A valid ping gets an ack, not an error (and without an id, no answer at all): draw again.
      if (frameCheck.Check(parsed) && parsed.type === "ping" && pingCheck.Check(parsed.data ?? {})) continue;
      const id =
        typeof parsed?.id === "string" && parsed.id.length >= 1 && parsed.id.length <= 64
          ? parsed.id
          : undefined;
      out.push({ kind: "ws:random-json", payload: text, id, codes: null });
    } else if (roll === 2) {
      // An envelope that is broken in one place, but has a good id.
      const id = nextId();
      const broken = rng.pick<Record<string, unknown>>([
        { type: 5, id, data: {} },
        { type: "", id, data: {} },
        { type: "x".repeat(65), id, data: {} },
        { type: "ping", id, data: [] },
        { type: "ping", id, data: null },
        { type: "ping", id, data: "x" },
        { type: "ping", id, data: {}, extra: 1 },
        { id, data: {} },
      ]);
      out.push({
        kind: "ws:bad-envelope",
        payload: JSON.stringify(broken),
        id,
        codes: ["BadRequest", "InvalidRequest"],
      });
    } else if (roll === 3) {
      // An id that is not a usable id: nothing to echo.
      const bad = rng.pick([
        { type: "ping", id: 5, data: {} },
        { type: "ping", id: "", data: {} },
        { type: "ping", id: "x".repeat(65), data: {} },
      ]);
      out.push({
        kind: "ws:bad-id",
        payload: JSON.stringify(bad),
        codes: ["BadRequest", "InvalidRequest"],
      });
    } else if (roll === 4) {
      // Unknown frame types, including names of Object.prototype members.
      const id = nextId();
      const type = rng.pick([...PROTO_TYPES, ...OTHER_TYPES, randomString(rng, 20).slice(0, 64) || "y"]);
      out.push({
        kind: `ws:unknown-type${PROTO_TYPES.includes(type) ? ":prototype" : ""}`,
        payload: JSON.stringify({ type, id, data: {} }),
        id,
        codes: ["InvalidRequest"],
        field: "type",
      });
    } else if (roll <= 7) {
      // A known type with its data broken in one field.
      const id = nextId();
      const type = rng.pick(Object.keys(validData));
      const data = structuredClone(validData[type] as Record<string, unknown>);
      const keys = Object.keys(data);
      let field: string;
      const m = rng.int(4);
      if (m === 0 || keys.length === 0) {
        field = rng.pick(KEY_POOL.filter((k) => !keys.includes(k)));
        Object.defineProperty(data, field, {
          value: randomJson(rng, 3),
          enumerable: true,
          configurable: true,
          writable: true,
        });
      } else {
        field = rng.pick(keys);
        if (m === 1) data[field] = rng.pick(WRONG_TYPES.filter((v) => typeof v !== "string"));
        else if (m === 2 && field !== "joinToken" && field !== "admission") delete data[field];
        else data[field] = field === "content" ? "" : "x".repeat(rng.pick([0, 301, 5000]));
      }
      out.push({
        kind: `ws:bad-data:${type}`,
        payload: JSON.stringify({ type, id, data }),
        id,
        codes: ["InvalidRequest"],
        field,
      });
    } else if (roll === 8) {
      // Valid frames the caller is not allowed to act on.
      const id = nextId();
      const pick = rng.int(5);
      const [type, data, codes] = (
        [
          ["channel:join", { channelUri }, ["InviteRequired"]],
          ["channel:join", { channelUri: w.secretChannel.uri, joinToken: "nope" }, ["NotFound"]],
          ["channel:leave", { channelUri }, ["Forbidden"]],
          ["channel:message", { channelUri, content: "{}", clientMsgId: "1".repeat(32) }, ["Forbidden"]],
          ["auth", { token: w.fuzzer.token }, ["InvalidRequest"]],
        ] as [string, unknown, string[]][]
      )[pick] as [string, unknown, string[]];
      out.push({ kind: `ws:semantic:${type}`, payload: JSON.stringify({ type, id, data }), id, codes });
    } else {
      // Binary frames are not protocol frames.
      out.push({ kind: "ws:binary", payload: rng.bytes(1 + rng.int(64)), codes: ["BadRequest"] });
    }
  }
  return out;
}

/** First frames of fresh sockets that must not authenticate: each socket must close with 4401. */
/** Bad access tokens that are well signed but name a session that is over or not theirs. */
const SESSION_OVER_TOKENS = new Set(["logged_out", "unknown_session", "someone_elses_session"]);

export function preAuthPayloads(
  w: World,
  rng: Rng,
): { kind: string; payload: string | Uint8Array<ArrayBuffer>; sessionOver?: boolean }[] {
  const out: { kind: string; payload: string | Uint8Array<ArrayBuffer>; sessionOver?: boolean }[] = [];
  for (let i = 0; i < 15; i++) out.push({ kind: "not-json", payload: rng.pick(SYNTAX_GARBAGE) });
  for (let i = 0; i < 10; i++)
    out.push({ kind: "random-json", payload: JSON.stringify(randomJson(rng)) ?? "null" });
  out.push({ kind: "binary", payload: rng.bytes(20) });
  out.push({
    kind: "binary-auth",
    payload: new TextEncoder().encode(JSON.stringify({ type: "auth", data: { token: w.fuzzer.token } })),
  });
  out.push({ kind: "ping-first", payload: JSON.stringify({ type: "ping", id: "p", data: {} }) });
  out.push({
    kind: "join-first",
    payload: JSON.stringify({ type: "channel:join", id: "j", data: { channelUri: w.inviteChannel.uri } }),
  });
  out.push({ kind: "AUTH", payload: JSON.stringify({ type: "AUTH", data: { token: w.fuzzer.token } }) });
  for (const data of [
    undefined,
    null,
    {},
    { token: "" },
    { token: 5 },
    { token: "x".repeat(2049) },
    { token: w.fuzzer.token, x: 1 },
    { jwt: w.fuzzer.token },
    [w.fuzzer.token],
  ]) {
    out.push({ kind: "auth-bad-data", payload: JSON.stringify({ type: "auth", data }) });
  }
  for (const [name, tok] of Object.entries(w.badAccess)) {
    if (name === "long") continue;
    out.push({
      kind: `auth-token:${name}`,
      payload: JSON.stringify({ type: "auth", id: "a", data: { token: tok } }),
      // Well signed, but for a session that is over (logged out, unknown, another account's): 4403.
      sessionOver: SESSION_OVER_TOKENS.has(name),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// State snapshot: every table of the database, hashed.

export function snapshot(t: TestServer): Record<string, string> {
  const db = new Database(t.config.sqlitePath, { readonly: true });
  try {
    const tables = db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => r.name);
    const out: Record<string, string> = {};
    for (const name of tables) {
      const rows = db.query(`SELECT * FROM "${name}" ORDER BY rowid`).all();
      out[name] =
        `${rows.length} rows, sha256 ${createHash("sha256").update(JSON.stringify(rows)).digest("hex").slice(0, 16)}`;
    }
    return out;
  } finally {
    db.close();
  }
}

/** A fresh ephemeral P-256 public key as base64 of its 65-byte raw point (a device link's). */
export async function ephemeralKey(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, [
    "deriveBits",
  ])) as CryptoKeyPair;
  return Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64");
}

/** The people, channels, tokens and signed bodies the barrage aims at (a fresh server, `clock` its clock). */
export async function buildWorld(t: TestServer, clock: ManualClock): Promise<World> {
  // A session that will be 16 minutes old: its access token is expired during the barrage.
  const early = await person(t.url, "early");
  clock.advance(16 * 60 * 1000);
  const [victim, fuzzer, quitter] = await Promise.all([
    person(t.url, "victim"),
    person(t.url, "fuzzer"),
    person(t.url, "quitter"),
  ]);
  await ok(t.url, "logout", { did: quitter.session.did, refreshJwt: quitter.session.refreshJwt });
  const invite = await ok(t.url, "createChannel", { name: "invite room", type: "invite" }, victim.token);
  const r = await rotate(t.url, victim, invite.channel);
  if (r.res.status !== 200) throw new Error("epoch 1 refused");
  const secret = await ok(t.url, "createChannel", { name: "secret room", type: "secret" }, victim.token);
  const rs = await rotate(t.url, victim, secret.channel);
  if (rs.res.status !== 200) throw new Error("epoch 1 refused");
  const epoch = { epochId: r.epochId, epochNumber: 1, epochKey: r.epochKey };
  const sent = await ok(
    t.url,
    "send",
    await seal(victim, invite.channel, epoch, "before the storm"),
    victim.token,
  );
  await ok(t.url, "send", await seal(victim, invite.channel, epoch, "second"), victim.token);
  const tokens = await makeBadTokens(
    t,
    clock,
    fuzzer.session,
    victim.session,
    early.session,
    quitter.session,
  );
  return {
    t,
    victim,
    fuzzer,
    inviteChannel: invite.channel,
    secretChannel: secret.channel,
    messageUri: sent.record.uri,
    epochBody: { commit: r.commit, signature: r.signature, wrappedKeys: r.wrappedKeys },
    v1Commit: {
      v: 1,
      channelId: r.commit.channelId,
      epochNumber: r.commit.epochNumber,
      epochId: r.commit.epochId,
      prevEpochId: r.commit.prevEpochId,
      creatorDid: r.commit.creatorDid,
      members: r.commit.members.map((m) => ({ did: m.did, fp: m.fp })),
      createdAt: r.commit.createdAt,
    },
    signedInvite: (({ invite, signature }) => ({ invite, signature }))(
      await inviteBody(victim, invite.channel, fuzzer.session),
    ),
    signedDeletion: (({ deletion, signature }) => ({ deletion, signature }))(
      await deletionBody(victim, invite.channel, sent.record.uri),
    ),
    linkProof: (await linkJoinBody(fuzzer, secret.channel, newLinkSecret())).admission,
    signedMarker: await (async () => {
      const marker = { v: 3, channelId: invite.channel.id, seq: 1, createdAt: Date.now() };
      return { marker, signature: await signObject(fuzzer.identity, marker) };
    })(),
    ephemeralKey: await ephemeralKey(),
    badAccess: tokens.access,
    badRefresh: tokens.refresh,
  };
}

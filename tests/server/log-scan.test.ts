/**
 * Logs (issue 34): the real server process with WSYNC_LOG=json and WSYNC_LOG_LEVEL=debug through a
 * representative flow (register, a refused login, login, refresh, a channel and its epoch, messages
 * over a socket and over HTTP, a key backup, a bot token, a revoked session): every line it writes is
 * one JSON object with time, level and msg; every HTTP request has its own id, returned as
 * X-Request-Id and on its log line; sockets carry their own id; and no password, JWT, private key,
 * bot token, message ciphertext or plaintext appears anywhere in what it wrote.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateIdentity } from "../../core/crypto/index.ts";
import { sealKeyBackup } from "../../core/crypto/key-backup.ts";
import { API_BASE, Routes } from "../../core/protocol/index.ts";
import { createLogger, scrub } from "../../server/ops/log.ts";
import { call, ok, TestSocket } from "./harness.ts";
import { createChannel, person, seal } from "./people.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";

let dir: string;
let server: ServerProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "wsync-logscan-"));
  server = await startServerProcess(join(dir, "data"), { WSYNC_LOG: "json", WSYNC_LOG_LEVEL: "debug" });
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Line {
  time: string;
  level: string;
  msg: string;
  requestId?: string;
  socketId?: string;
  [k: string]: unknown;
}

test("a whole flow's JSON log lines: one id per request and socket, no secret of the flow", async () => {
  const url = server.url;
  const secrets: string[] = [];
  const PASSWORD = "correct horse battery";
  secrets.push(PASSWORD);

  const alice = await person(url, "alice");
  const bob = await person(url, "bob");
  for (const p of [alice, bob]) secrets.push(p.session.accessJwt, p.session.refreshJwt, p.privateKey);

  // A refused login (a wrong password) and a good one; a refresh.
  const wrong = "Tr0ub4dor&3-not-it";
  secrets.push(wrong);
  expect((await call(url, "login", { identifier: alice.name, password: wrong })).status).toBe(401);
  const again = await ok(url, "login", { identifier: alice.name, password: PASSWORD });
  secrets.push(again.accessJwt, again.refreshJwt);
  const refreshed = await fetch(url + API_BASE + Routes.refresh.path, {
    method: "POST",
    headers: { authorization: `Bearer ${again.refreshJwt}`, "content-type": "application/json" },
    body: "{}",
  });
  expect(refreshed.status).toBe(200);
  const fresh = (await refreshed.json()) as { accessJwt: string; refreshJwt: string };
  secrets.push(fresh.accessJwt, fresh.refreshJwt);
  const requestId = refreshed.headers.get("x-request-id");
  expect(requestId).toMatch(/^[A-Za-z0-9_-]{8,}$/);

  // A channel with its first epoch, bob in it, messages over a socket and over HTTP.
  const room = await createChannel(url, alice, "public", "log-room");
  const socket = await TestSocket.connect(server.wsUrl, alice.token);
  await socket.request("channel:join", { channelUri: room.channel.uri });
  const epoch = { epochId: room.epochId, epochNumber: 1, epochKey: room.epochKey };
  const texts: string[] = [];
  for (let i = 0; i < 3; i++) {
    const text = `log canary ${i} ${crypto.randomUUID()}`;
    texts.push(text);
    const body = await seal(alice, room.channel, epoch, text);
    secrets.push(body.content, text);
    const ack = await socket.request("channel:message", body);
    expect(ack.type).toBe("ack");
  }
  const overHttp = await seal(alice, room.channel, epoch, `http canary ${crypto.randomUUID()}`);
  secrets.push(overHttp.content);
  await ok(url, "send", overHttp, alice.token);
  socket.close();
  await ok(url, "joinChannel", { channelUri: room.channel.uri }, bob.token);

  // A key backup (its sealed private key) and a bot token.
  const backup = await sealKeyBackup({
    did: alice.session.did,
    privateKey: alice.privateKey,
    kind: "passphrase",
    secret: "another correct horse staple",
    params: { m: 19_456, t: 2, p: 1 },
  });
  secrets.push("another correct horse staple", JSON.stringify(backup));
  for (const v of Object.values(backup as unknown as Record<string, unknown>))
    if (typeof v === "string" && v.length >= 16 && v !== alice.session.did) secrets.push(v);
  const put = await fetch(url + API_BASE + Routes.keyBackupPut.path, {
    method: "PUT",
    headers: { authorization: `Bearer ${alice.token}`, "content-type": "application/json" },
    body: JSON.stringify({ backup }),
  });
  expect(put.status).toBe(200);
  const botKeys = await generateIdentity();
  const bot = await ok(
    url,
    "botCreate",
    {
      handle: `logs${Math.random().toString(36).slice(2, 6)}bot`,
      publicKey: botKeys.publicKey,
      channels: [room.channel.uri],
    },
    alice.token,
  );
  secrets.push(bot.token, botKeys.privateKey);
  expect((await call(url, "botSelf", {}, bot.token)).status).toBe(200);

  // A session revoked while its socket is open: the server closes it and says so in the log.
  const bobSocket = await TestSocket.connect(server.wsUrl, bob.token);
  const { sessions } = await ok(url, "listSessions", {}, bob.token);
  const own = sessions.find((s) => s.current);
  expect(own).toBeDefined();
  const other = await ok(url, "login", { identifier: bob.name, password: PASSWORD });
  secrets.push(other.accessJwt, other.refreshJwt);
  await ok(url, "revokeSession", { sessionId: own?.id ?? "" }, other.accessJwt);
  expect(await bobSocket.waitClose()).toBe(4403);

  // Every line is JSON; wait until the server's lines about this flow are all written.
  let lines: Line[] = [];
  for (let i = 0; i < 200; i++) {
    const text = server.stderr();
    lines = text
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => {
        try {
          return JSON.parse(l) as Line;
        } catch {
          throw new Error(`not a JSON line: ${l}`);
        }
      });
    if (lines.some((l) => l.msg === "socket closed by the server" && l.code === 4403)) break;
    await Bun.sleep(25);
  }
  for (const l of lines) {
    expect(typeof l.time).toBe("string");
    expect(["debug", "info", "warn", "error"]).toContain(l.level);
    expect(typeof l.msg).toBe("string");
  }
  // One line per API request, with its own id: the refresh's id is the one it answered with.
  const requests = lines.filter((l) => l.msg === "request");
  expect(requests.length).toBeGreaterThan(10);
  const refreshLine = requests.find((l) => l.requestId === requestId);
  expect(refreshLine).toMatchObject({ method: "POST", path: "/api/auth/refresh", status: 200 });
  expect(new Set(requests.map((l) => l.requestId)).size).toBe(requests.length);
  expect(requests.find((l) => l.path === "/api/auth/login" && l.status === 401)).toBeDefined();
  // Sockets carry their ids; the one the server closed says why.
  const closed = lines.find((l) => l.msg === "socket closed by the server" && l.code === 4403);
  expect(closed?.socketId).toMatch(/^[A-Za-z0-9_-]{8,}$/);
  expect(closed?.did).toBe(bob.session.did);
  expect(lines.some((l) => l.msg === "socket authenticated" && l.did === alice.session.did)).toBe(true);

  // The scan works: public things the flow used do appear (ids, dids, paths) ...
  const all = server.stderr();
  expect(all).toContain(alice.session.did);
  expect(all).toContain("/api/channel/create");
  // ... and none of its secrets, in any encoding a careless line might use.
  const leaked = secrets.filter((s) => {
    const forms = [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)];
    // A long secret is also looked for by its middle part (a truncated or wrapped line).
    if (s.length > 40) forms.push(s.slice(10, 40));
    return forms.some((f) => all.includes(f));
  });
  expect(leaked).toEqual([]);
});

test("the logger itself drops secret-named fields and scrubs token-shaped text, at the level asked", () => {
  const out: string[] = [];
  const log = createLogger({ format: "json", level: "info", write: (l) => out.push(l) });
  const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz";
  log.debug("not written");
  log.info(`refresh with ${jwt}`, { password: "hunter2", refreshJwt: jwt, path: "/api/x", did: "did:x" });
  log.child({ requestId: "r1" }).warn("Bearer abc.def is bad", { token: "wsb_ABC_def" });
  expect(out).toHaveLength(2);
  const [a, b] = out.map((l) => JSON.parse(l) as Line);
  expect(a).toMatchObject({
    level: "info",
    msg: "refresh with [redacted jwt]",
    path: "/api/x",
    did: "did:x",
  });
  expect(a).not.toHaveProperty("password");
  expect(a).not.toHaveProperty("refreshJwt");
  expect(b).toMatchObject({ level: "warn", requestId: "r1", msg: "Bearer [redacted] is bad" });
  expect(b).not.toHaveProperty("token");
  expect(scrub("key AAAAB3NzaC1yc2EAAAADAQABAAABAQC7x9q0aZ3mK8pQ2vT5wY1nR4sU6hJ0fL3dG9kE2bV7cX8 end")).toBe(
    "key [redacted] end",
  );
  // A file path is not mistaken for a key.
  expect(scrub("/var/lib/wsync/data/a-rather-long-folder-name/and-another-one/wsync.db")).toContain(
    "wsync.db",
  );
  const text: string[] = [];
  createLogger({ format: "text", write: (l) => text.push(l) }).error("disk full", { kind: "full" });
  expect(text).toEqual(["[wsync] error: disk full kind=full"]);
});

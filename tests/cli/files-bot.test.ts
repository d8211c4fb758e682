/**
 * Files with a bot (issue 31): a member sends a file with `wsync send --file`, the bot's
 * `api --listen` sees it as a `listen --json` event carrying the file (never its key), downloads it
 * with the api's `download` (the same bytes; an existing path refused without `force`), sends one
 * back with `upload`, and the member's `wsync get` saves exactly those bytes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { NO_WRITE_LIMITS, startTestServer, type TestServer } from "../server/harness.ts";
import { Cli, type CliUser, cleanupTempDirs, registerCli, tempDir } from "./cli-harness.ts";

let t: TestServer;
let owner: CliUser;
let token = "";
const botHome = tempDir("wsync-filebot-");
const procs: Subprocess[] = [];
const json = (line: string) => JSON.parse(line) as Record<string, unknown>;

function data(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 11 + seed) & 255;
  return out;
}

beforeAll(async () => {
  t = await startTestServer({ env: NO_WRITE_LIMITS });
  owner = await registerCli(t.url, "fileowner");
  await owner.cli.ok(["create", "g", "--type", "public"]);
  await owner.cli.ok(["send", "#g", "hello"]);
  token = (await owner.cli.ok(["bot", "create", "filebot", "--channel", "#g"])).trim();
}, 60_000);

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await t?.stop();
  cleanupTempDirs();
});

test("a bot receives a file as an event, downloads it, uploads one back, and the member gets the same bytes", async () => {
  const dir = tempDir();
  const api = new Cli(t.url, { configHome: botHome }).start(["api", "--listen", "--no-self"], {
    env: { WSYNC_BOT_TOKEN: token },
  });
  procs.push(api.proc);
  await api.err.waitFor((l) => l.startsWith("Listening to 1 channel"), 30_000, "api --listen ready");
  let id = 0;
  const request = async (method: string, params: Record<string, unknown> = {}) => {
    const rid = `f${++id}`;
    api.proc.stdin.write(`${JSON.stringify({ id: rid, method, params })}\n`);
    api.proc.stdin.flush();
    return json(await api.out.waitFor((l) => json(l).id === rid, 60_000, `answer ${rid}`));
  };

  // A member's file arrives as an event with the file's name, size and blob, never its key.
  const sent = data(150_000, 3);
  writeFileSync(join(dir, "chart.bin"), sent);
  await owner.cli.ok(["send", "#g", "--file", join(dir, "chart.bin"), "the", "chart"]);
  const ev = json(await api.out.waitFor((l) => json(l).text === "the chart", 30_000, "the file's event"));
  expect(ev).toMatchObject({ type: "item", kind: "message", verified: true });
  const file = ev.file as Record<string, unknown>;
  expect(file).toMatchObject({ name: "chart.bin", size: 150_000 });
  expect(Object.keys(file)).not.toContain("key");

  const got = await request("download", { channel: "#g", blob: file.blob, path: join(dir, "got.bin") });
  expect(got).toMatchObject({
    type: "response",
    ok: true,
    result: { blob: file.blob, path: join(dir, "got.bin"), name: "chart.bin", size: 150_000 },
  });
  expect(new Uint8Array(readFileSync(join(dir, "got.bin")))).toEqual(sent);
  // An existing path is refused (exit code 8 as `get`), and replaced with force.
  writeFileSync(join(dir, "got.bin"), "keep");
  const again = await request("download", { channel: "#g", blob: file.blob, path: join(dir, "got.bin") });
  expect(again).toMatchObject({ ok: false, error: { code: 8 } });
  expect(readFileSync(join(dir, "got.bin"), "utf8")).toBe("keep");
  expect(
    await request("download", { channel: "#g", blob: file.blob, path: join(dir, "got.bin"), force: true }),
  ).toMatchObject({ ok: true });
  expect(new Uint8Array(readFileSync(join(dir, "got.bin")))).toEqual(sent);
  expect(await request("download", { channel: "#g", blob: "nope", path: join(dir, "x") })).toMatchObject({
    ok: false,
    error: { code: 2 },
  });

  // The bot sends a file back; the member's `get` saves exactly its bytes.
  const back = data(70_000, 9);
  writeFileSync(join(dir, "reply.dat"), back);
  const up = await request("upload", { channel: "#g", path: join(dir, "reply.dat"), text: "processed" });
  expect(up).toMatchObject({
    ok: true,
    result: { text: "processed", file: { name: "reply.dat", size: 70_000 } },
  });
  const blob = ((up.result as Record<string, unknown>).file as { blob: string }).blob;
  const out = join(dir, "from-bot.dat");
  await owner.cli.ok(["get", `#g/${blob}`, "-o", out]);
  expect(new Uint8Array(readFileSync(out))).toEqual(back);
  expect(await request("upload", { channel: "#g", path: join(dir, "missing.dat") })).toMatchObject({
    ok: false,
    error: { code: 4 },
  });

  api.proc.stdin.end();
  expect(await api.proc.exited).toBe(0);
}, 180_000);

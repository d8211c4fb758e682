/**
 * Issue 15, for bots and scripts: `wsync listen` and `wsync api` side by side on one device, with cold
 * `wsync send` processes beside them, past several access-token lifetimes (5 s here, by
 * WSYNC_ACCESS_TOKEN_TTL_SECONDS), with the server's refresh grace window turned off so only the
 * shared, locked session file keeps them alive. Then what each stream and method says.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { type Cli, type CliUser, cleanupTempDirs, type LineReader, registerCli } from "./cli-harness.ts";

let t: TestServer;
let alice: CliUser;
let bob: CliUser;
const procs: Subprocess[] = [];

beforeAll(async () => {
  t = await startTestServer({
    env: { WSYNC_ACCESS_TOKEN_TTL_SECONDS: "5", WSYNC_REFRESH_GRACE_SECONDS: "0" },
  });
  alice = await registerCli(t.url, "botowner");
  bob = await registerCli(t.url, "human");
});

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await t?.stop();
  cleanupTempDirs();
});

/** A long-running command of `cli` with standard input to write to (killed after the file). */
function start(cli: Cli, args: string[]) {
  const started = cli.start(args);
  procs.push(started.proc);
  return started;
}

const json = (line: string) => JSON.parse(line) as Record<string, unknown>;

describe("a bot on one device", () => {
  test("listen and api side by side, with cold sends, live past several token lifetimes; no session lost", async () => {
    const channelId = (await alice.cli.ok(["create", "botroom", "--type", "public"])).trim();
    await bob.cli.ok(["join", channelId]);

    const listen = start(alice.cli, ["listen", "--json"]);
    await listen.err.waitFor((l) => l.startsWith("Listening to 1 channel"), 20_000, "listen ready");
    const api = start(alice.cli, ["api"]);
    let nextId = 0;
    const request = async (method: string, params: Record<string, unknown>) => {
      const id = `r${++nextId}`;
      api.proc.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
      api.proc.stdin.flush();
      const line = await api.out.waitFor((l) => json(l).id === id, 20_000, `answer ${id}`);
      return json(line);
    };
    expect(await request("whoami", {})).toMatchObject({ ok: true, result: { did: alice.did } });

    // 18 s: more than three lifetimes of a 5 s access token, each process refreshing on its own.
    const sent: string[] = [];
    const until = Date.now() + 18_000;
    for (let round = 0; Date.now() < until; round++) {
      const viaApi = `api ${round}`;
      const answer = await request("send", { channel: channelId, text: viaApi });
      expect(answer).toMatchObject({ ok: true, result: { text: viaApi, verified: true } });
      sent.push(viaApi);
      const viaBob = `bob ${round}`;
      await bob.cli.ok(["send", channelId, viaBob]);
      sent.push(viaBob);
      if (round % 2 === 0) {
        // A cold process of the bot's own device, sharing the session file.
        const cold = `cold ${round}`;
        await alice.cli.ok(["send", channelId, cold]);
        sent.push(cold);
      }
      await Bun.sleep(1000);
    }
    // Every message reached the stream once, in order.
    const texts = () =>
      listen.out.lines
        .map(json)
        .filter((e) => e.type === "item" && e.kind === "message")
        .map((e) => e.text as string);
    const last = sent[sent.length - 1] as string;
    await listen.out.waitFor((l) => json(l).text === last, 20_000, "the last message in the stream");
    expect(texts()).toEqual(sent);
    for (const e of listen.out.lines.map(json).filter((x) => x.type === "item")) {
      expect(e.channelId).toBe(channelId);
      expect(e.channel).toBe("botroom");
    }
    // Nobody's session ended: both are alive, and the device is still signed in.
    expect(listen.err.lines.join("\n")).not.toContain("session ended");
    expect(api.err.lines.join("\n")).not.toContain("session ended");
    expect(listen.proc.exitCode).toBeNull();
    expect(api.proc.exitCode).toBeNull();
    expect(await request("whoami", {})).toMatchObject({ ok: true });
    expect(await alice.cli.ok(["whoami"])).toContain(alice.handle);
    // Far more refreshes than processes: the test did cross several lifetimes.
    api.proc.stdin.end();
    expect(await api.proc.exited).toBe(0);
    listen.proc.kill("SIGTERM");
    expect(await listen.proc.exited).toBe(0);
  }, 90_000);
});

describe("streams and methods", () => {
  test("listen: --since per channel, --tail, --no-self; invitations, kicks and joins as events", async () => {
    const a = (await alice.cli.ok(["create", "streama", "--type", "public"])).trim();
    const b = (await alice.cli.ok(["create", "streamb", "--type", "public"])).trim();
    await bob.cli.ok(["join", a]);
    for (const text of ["a1", "a2", "a3"]) await alice.cli.ok(["send", a, text]);
    await bob.cli.ok(["send", a, "a4 from bob"]);
    for (const text of ["b1", "b2"]) await alice.cli.ok(["send", b, text]);
    const seqOf = async (channel: string, text: string) => {
      const items = JSON.parse(await alice.cli.ok(["read", channel, "--json"])) as {
        text: string;
        seq: number;
      }[];
      return items.find((i) => i.text === text)?.seq as number;
    };
    const a2 = await seqOf(a, "a2");
    const b1 = await seqOf(b, "b1");

    // A restarted bot: everything after the seqs it kept, per channel, then live.
    const since = start(alice.cli, ["listen", "--json", "--since", `${a}=${a2}`, "--since", `${b}=${b1}`]);
    await since.err.waitFor((l) => l.startsWith("Listening to"), 20_000);
    const messages = (r: LineReader, channelId?: string) =>
      r.lines
        .map(json)
        .filter((e) => e.type === "item" && e.kind === "message" && (!channelId || e.channelId === channelId))
        .map((e) => e.text);
    await since.out.waitFor((l) => json(l).text === "a4 from bob", 20_000);
    await since.out.waitFor((l) => json(l).text === "b2", 20_000);
    expect(messages(since.out, a)).toEqual(["a3", "a4 from bob"]);
    expect(messages(since.out, b)).toEqual(["b2"]);
    since.proc.kill("SIGTERM");

    // --tail 1 --no-self: each channel's last item, and later only other people's messages.
    const tail = start(alice.cli, ["listen", "--json", "--tail", "1", "--no-self"]);
    await tail.err.waitFor((l) => l.startsWith("Listening to"), 20_000);
    await tail.out.waitFor((l) => json(l).text === "a4 from bob", 20_000);
    expect(messages(tail.out, a)).toEqual(["a4 from bob"]);
    expect(messages(tail.out, b)).toEqual([]); // b's last item is alice's own
    await alice.cli.ok(["send", a, "mine, left out"]);
    await bob.cli.ok(["send", a, "bob again"]);
    await tail.out.waitFor((l) => json(l).text === "bob again", 20_000);
    expect(messages(tail.out, a)).toEqual(["a4 from bob", "bob again"]);

    // Joins, leaves and kicks of others are items of kind notify with their action.
    const carol = await registerCli(t.url, "carol");
    await carol.cli.ok(["join", a]);
    await tail.out.waitFor((l) => json(l).kind === "notify" && json(l).action === "joined", 20_000);
    await alice.cli.ok(["kick", a, carol.handle]);
    await tail.out.waitFor((l) => json(l).kind === "notify" && json(l).action === "kicked", 20_000);

    // An invitation to the listener's user.
    const c = (await bob.cli.ok(["create", "bobsroom", "--type", "invite"])).trim();
    await bob.cli.ok(["invite", c, alice.handle]);
    const invited = json(await tail.out.waitFor((l) => json(l).type === "invited", 20_000));
    expect(invited).toMatchObject({ channelId: c, channel: "bobsroom", from: { handle: bob.handle } });
    // Joined from another process: followed within the rescan period, then its messages come in.
    await alice.cli.ok(["join", c]);
    await tail.out.waitFor((l) => json(l).type === "subscribed" && json(l).channelId === c, 20_000);
    await bob.cli.ok(["send", c, "welcome"]);
    await tail.out.waitFor((l) => json(l).text === "welcome" && json(l).channelId === c, 20_000);

    // Kicked from it: a removed event, and the stream goes on for the other channels.
    await bob.cli.ok(["kick", c, alice.handle]);
    const removed = json(await tail.out.waitFor((l) => json(l).type === "removed", 20_000));
    expect(removed).toEqual({ type: "removed", channelId: c, channel: "bobsroom", reason: "kicked" });
    await bob.cli.ok(["send", a, "still here"]);
    await tail.out.waitFor((l) => json(l).text === "still here", 20_000);
    tail.proc.kill("SIGTERM");
    expect(await tail.proc.exited).toBe(0);
  }, 120_000);

  test("tail prints the kick and exits 7; read, tail and send never join a public channel", async () => {
    const room = (await bob.cli.ok(["create", "kickroom", "--type", "public"])).trim();
    for (const args of [
      ["read", room],
      ["tail", room],
      ["send", room, "hi"],
    ]) {
      const r = await alice.cli.run(args, { timeoutMs: 20_000 });
      expect({ args, code: r.code }).toEqual({ args, code: 4 });
      expect(r.stderr).toBe(`wsync: You are not in #kickroom: run \`wsync join ${room}\` first\n`);
    }
    const channels = JSON.parse(await alice.cli.ok(["channels", "--json"])) as {
      id: string;
      isMember: boolean;
    }[];
    expect(channels.find((c) => c.id === room)?.isMember).toBe(false);

    await alice.cli.ok(["join", room]);
    const tail = start(alice.cli, ["tail", room]);
    await tail.err.waitFor((l) => l.startsWith("Following"), 20_000);
    await bob.cli.ok(["kick", room, alice.handle]);
    expect(await tail.proc.exited).toBe(7);
    expect(tail.out.lines).toContain("*** You were kicked from #kickroom");

    await alice.cli.ok(["join", room]);
    const jsonTail = start(alice.cli, ["tail", room, "--json"]);
    await jsonTail.err.waitFor((l) => l.startsWith("Following"), 20_000);
    await bob.cli.ok(["kick", room, alice.handle]);
    expect(await jsonTail.proc.exited).toBe(7);
    expect(jsonTail.out.lines.map(json)).toContainEqual({
      type: "removed",
      channelId: room,
      channel: "kickroom",
      reason: "kicked",
    });
  }, 90_000);

  test("api: every method, ids echoed, errors with their exit code, bad lines answered", async () => {
    const api = start(alice.cli, ["api"]);
    let n = 0;
    const ask = async (req: unknown) => {
      const id = `q${++n}`;
      const line = typeof req === "string" ? req : JSON.stringify({ id, ...(req as object) });
      api.proc.stdin.write(`${line}\n`);
      api.proc.stdin.flush();
      return json(
        await api.out
          .waitFor(() => api.out.lines.length >= n, 20_000, `answer ${n}`)
          .then(() => api.out.lines[n - 1] as string),
      );
    };
    const created = (await alice.cli.ok(["create", "apiroom", "--type", "invite", "--json"])).trim();
    const room = json(created).id as string;
    expect(await ask({ method: "list" })).toMatchObject({ id: "q1", ok: true });
    const sent = await ask({ method: "send", params: { channel: "#apiroom", text: "first" } });
    expect(sent).toMatchObject({ id: "q2", ok: true, result: { text: "first", verified: true } });
    const seq = (sent.result as { seq: number }).seq;
    const uri = (sent.result as { uri: string }).uri;
    expect(await ask({ method: "reply", params: { channel: room, to: seq, text: "a reply" } })).toMatchObject(
      {
        ok: true,
        result: { rich: { type: "reply" } },
      },
    );
    expect(await ask({ method: "react", params: { channel: room, to: uri, emoji: "👍" } })).toMatchObject({
      ok: true,
      result: { rich: { type: "reaction", emoji: "👍" } },
    });
    expect(
      await ask({ method: "edit", params: { channel: room, to: seq, text: "first, edited" } }),
    ).toMatchObject({
      ok: true,
      result: { rich: { type: "edit" } },
    });
    expect(await ask({ method: "invite", params: { channel: room, handle: bob.handle } })).toMatchObject({
      ok: true,
    });
    await bob.cli.ok(["join", room]);
    expect(await ask({ method: "members", params: { channel: room } })).toMatchObject({ ok: true });
    expect(await ask({ method: "kick", params: { channel: room, handle: bob.handle } })).toMatchObject({
      ok: true,
      result: { kicked: true, did: bob.did },
    });
    expect(await ask({ method: "delete", params: { channel: room, to: seq } })).toMatchObject({
      ok: true,
      result: { uri, deleted: true },
    });
    const read = await ask({ method: "read", params: { channel: room, limit: 100 } });
    const first = (read.result as { uri: string; deleted: unknown }[]).find((i) => i.uri === uri);
    expect(first?.deleted).toMatchObject({ did: alice.did, signed: true });
    // Errors: the message and the exit code the command line would have given.
    expect(await ask({ method: "send", params: { channel: "nope", text: "x" } })).toMatchObject({
      ok: false,
      error: { code: 2 },
    });
    expect(await ask({ method: "send", params: { channel: "aaaaaaaaaaaaaaaa", text: "x" } })).toMatchObject({
      ok: false,
      error: { code: 4 },
    });
    expect(await ask({ method: "fly" })).toMatchObject({ ok: false, error: { code: 2 } });
    expect(await ask({ method: "reply", params: { channel: room, to: 999999, text: "x" } })).toMatchObject({
      ok: false,
      error: { code: 4 },
    });
    n++;
    api.proc.stdin.write("this is not json\n");
    api.proc.stdin.flush();
    await api.out.waitFor(() => api.out.lines.length >= n, 20_000);
    expect(json(api.out.lines[n - 1] as string)).toMatchObject({ id: null, ok: false, error: { code: 2 } });
    expect(await ask({ method: "leave", params: { channel: room } })).toMatchObject({ ok: true });
    api.proc.stdin.end();
    expect(await api.proc.exited).toBe(0);
  }, 90_000);
});

test("localhost and 127.0.0.1 are one machine: one store, one session; an earlier 127.0.0.1 store is adopted", async () => {
  const port = new URL(t.url).port;
  const { Cli } = await import("./cli-harness.ts");
  for (const host of ["localhost", "127.0.0.1"]) {
    const same = new Cli(`http://${host}:${port}`, { configHome: alice.cli.configHome });
    expect(await same.ok(["whoami"])).toContain(alice.handle);
  }
  // A store an earlier version wrote as 127.0.0.1_PORT.json is moved to the shared name on first use.
  const dave = await registerCli(t.url, "dave");
  const shared = dave.cli.storeFile;
  const legacy = join(dave.cli.configDir, `127.0.0.1_${port}.json`);
  renameSync(shared, legacy);
  expect(await dave.cli.ok(["whoami"])).toContain(dave.handle);
  expect(existsSync(shared)).toBe(true);
  expect(existsSync(legacy)).toBe(false);
});

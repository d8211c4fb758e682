/**
 * The compiled binary, as CI ships it: build dist/wsync, copy it alone into an empty directory, run
 * `./wsync serve` there (data under ./data) and do a send/read round trip with the same binary as
 * the client. The binary runs with an environment that has no Bun, Node or node_modules in reach.
 */
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  Cli,
  cleanupTempDirs,
  closedPort,
  LineReader,
  REPO_ROOT,
  registerCli,
  tempDir,
} from "./cli-harness.ts";

afterAll(() => cleanupTempDirs());

interface ItemJson {
  kind: string;
  text: string | null;
  verified: boolean;
  state: string;
  author: { did: string };
}

test("the compiled binary serves from an empty directory and round-trips a message", async () => {
  const build = Bun.spawn([process.execPath, "scripts/build.ts"], {
    cwd: REPO_ROOT,
    stdout: "pipe",
    stderr: "pipe",
    timeout: 40_000,
  });
  const [buildOut, buildErr, buildCode] = await Promise.all([
    new Response(build.stdout).text(),
    new Response(build.stderr).text(),
    build.exited,
  ]);
  if (buildCode !== 0) throw new Error(`build exited ${buildCode}\n${buildOut}\n${buildErr}`);
  expect(buildOut).toContain("built ");

  const dir = tempDir("wsync-bin-");
  const bin = join(dir, "wsync");
  copyFileSync(join(REPO_ROOT, "dist", "wsync"), bin);
  expect(readdirSync(dir)).toEqual(["wsync"]);
  // No PATH to a Bun or Node, no node_modules above the directory, no inherited wsync settings.
  const baseEnv = { HOME: dir, PATH: "/nonexistent", WSYNC_WEATHER_URL: "http://127.0.0.1:9/" };

  let server: ReturnType<Cli["spawn"]> | null = null;
  let url = "";
  try {
    // The port is free when picked; if something takes it first, pick another.
    for (let attempt = 0; attempt < 3 && !url; attempt++) {
      const port = await closedPort();
      const proc = new Cli(`http://127.0.0.1:${port}`, { bin: "./wsync", cwd: dir, baseEnv }).spawn([
        "serve",
        "--port",
        String(port),
      ]);
      const out = new LineReader(proc.stdout);
      try {
        await out.waitFor((l) => l.includes("listening"), 15_000, "the server to listen");
        server = proc;
        url = `http://127.0.0.1:${port}`;
      } catch (e) {
        proc.kill("SIGKILL");
        if (attempt === 2)
          throw new Error(`${(e as Error).message}\n${await new Response(proc.stderr).text()}`);
      }
    }

    const dataDir = join(dir, "data");
    expect(existsSync(join(dataDir, "wsync.db"))).toBe(true);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(await (await fetch(`${url}/api/health`)).json()).toMatchObject({ ok: true });

    const opts = { bin, cwd: dir, baseEnv };
    const alice = await registerCli(url, "alice", opts);
    const bob = await registerCli(url, "bob", opts);
    const link = (await alice.cli.ok(["create", "bin-room", "--type", "secret"])).trim();
    const channelId = /\/sync\/join\/([a-z2-7]{16})#/.exec(link)?.[1];
    expect(channelId).toBeDefined();
    expect(await bob.cli.ok(["join", link])).toBe(`Joined #bin-room (${channelId})\n`);
    await alice.cli.ok(["send", channelId as string, "hello from the binary"]);
    await bob.cli.ok(["send", channelId as string, "-"], { stdin: "and back\n" });

    const items = JSON.parse(await bob.cli.ok(["read", channelId as string, "--json"])) as ItemJson[];
    expect(
      items.filter((i) => i.kind === "message").map((i) => [i.text, i.author.did, i.verified, i.state]),
    ).toEqual([
      ["hello from the binary", alice.did, true, "success"],
      ["and back", bob.did, true, "success"],
    ]);
    expect(await alice.cli.ok(["read", channelId as string])).toContain(`${bob.handle} ✓ and back`);
    // The binary's clients kept their credentials in their own config directories, not in ./
    expect(readdirSync(dir).sort()).toEqual(["data", "wsync"]);

    // The web pages are in the binary too (GET / redirects to the first page).
    const page = await fetch(`${url}/`);
    expect({ url: page.url, status: page.status }).toEqual({ url: page.url, status: 200 });
    expect(page.headers.get("content-type")).toContain("text/html");

    const s = server as NonNullable<typeof server>;
    s.kill("SIGTERM");
    expect(await s.exited).toBe(0);
  } finally {
    server?.kill("SIGKILL");
  }
}, 60_000);

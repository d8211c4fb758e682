/**
 * Benchmark: the CLI as scripts and bots use it, with the compiled binary (built first when missing).
 * - `dist/wsync --version`: a cold start, spawn to exit;
 * - `dist/wsync send CHANNEL text`: a cold process that signs in from its stored session, encrypts,
 *   signs and sends one message, spawn to exit;
 * - a `!ping` bot: bob sends `!ping` (through `wsync api`), the bot's `wsync listen --json` sees it
 *   and answers `pong`, once with a cold `wsync send` per answer (the docs' bash loop) and once
 *   through a warm `wsync api`; measured from bob's request to `pong` in bob's own `listen` stream;
 * - the same with a bot account (issue 29): `wsync bot create`, then one `wsync api --listen`
 *   process with WSYNC_BOT_TOKEN that both sees `!ping` and answers it, and a cold `wsync send` with
 *   the bot token (spawn to exit).
 * The server is the same binary (`dist/wsync serve`, SQLite) in a new directory.
 * Usage: npm run bench:bot [runs=15]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closedPort, LineReader, PASSWORD, REPO_ROOT } from "../cli/cli-harness.ts";
import { freshBinary } from "./fresh-binary.ts";

const runs = Number(process.argv[2] ?? 15);
const binary = join(REPO_ROOT, "dist", "wsync");
freshBinary();

const dir = mkdtempSync(join(tmpdir(), "wsync-bench-bot-"));
const port = await closedPort();
const server = `http://127.0.0.1:${port}`;
const serve = Bun.spawn([binary, "serve", "--port", String(port), "--data", join(dir, "data")], {
  cwd: dir,
  env: { ...process.env, WSYNC_RATE_LIMIT_SCALE: "0" },
  stdout: "pipe",
  stderr: "pipe",
});
await new LineReader(serve.stdout).waitFor((l) => l.includes("listening"), 30_000, "the server");

const env = (who: string, extra: Record<string, string> = {}) => ({
  ...process.env,
  XDG_CONFIG_HOME: join(dir, who),
  WSYNC_SERVER: server,
  ...extra,
});
async function run(
  who: string,
  args: string[],
  stdin?: string,
  extra: Record<string, string> = {},
): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  const p = Bun.spawn([binary, ...args], {
    env: env(who, extra),
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`wsync ${args.join(" ")} exited ${code}: ${err}`);
  return { ms, out };
}
function start(who: string, args: string[], extra: Record<string, string> = {}) {
  const p = Bun.spawn([binary, ...args], {
    env: env(who, extra),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  return { p, out: new LineReader(p.stdout), err: new LineReader(p.stderr) };
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const fmt = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${median(xs).toFixed(0)} ms, min ${(s[0] as number).toFixed(0)}, max ${(s.at(-1) as number).toFixed(0)} (${xs.length} runs)`;
};

try {
  console.log(`cli-bot: dist/wsync is ${(statSync(binary).size / 2 ** 20).toFixed(1)} MiB`);
  const version: number[] = [];
  for (let i = 0; i < runs; i++) version.push((await run("nobody", ["--version"])).ms);
  console.log(`cli-bot: dist/wsync --version (cold start): ${fmt(version)}`);

  for (const who of ["bot", "bob"])
    await run(
      who,
      ["register", "--handle", `${who}${port}`, "--email", `${who}${port}@x.com`, "--password-stdin"],
      PASSWORD,
    );
  const channel = (await run("bot", ["create", "bench", "--type", "public"])).out.trim();
  await run("bob", ["join", channel]);

  const send: number[] = [];
  for (let i = 0; i < runs; i++) send.push((await run("bot", ["send", channel, `cold ${i}`])).ms);
  console.log(`cli-bot: dist/wsync send (cold process, spawn to exit): ${fmt(send)}`);

  // bob: a warm api to send !ping, and a listen to see the answers.
  const bobApi = start("bob", ["api"]);
  const bobListen = start("bob", ["listen", "--json"]);
  await bobListen.err.waitFor((l) => l.startsWith("Listening"), 30_000);
  const botListen = start("bot", ["listen", "--json", "--no-self"]);
  await botListen.err.waitFor((l) => l.startsWith("Listening"), 30_000);
  const botApi = start("bot", ["api"]);

  let n = 0;
  async function pingRound(answer: (channelId: string, text: string) => Promise<void>): Promise<number> {
    const tag = `${++n}`;
    const t0 = performance.now();
    bobApi.p.stdin.write(
      `${JSON.stringify({ id: tag, method: "send", params: { channel, text: `!ping ${tag}` } })}\n`,
    );
    bobApi.p.stdin.flush();
    const ev = JSON.parse(await botListen.out.waitFor((l) => JSON.parse(l).text === `!ping ${tag}`, 30_000));
    await answer(ev.channelId, `pong ${tag}`);
    await bobListen.out.waitFor((l) => JSON.parse(l).text === `pong ${tag}`, 30_000);
    return performance.now() - t0;
  }
  const cold: number[] = [];
  for (let i = 0; i < runs; i++)
    cold.push(await pingRound(async (id, text) => void (await run("bot", ["send", id, text]))));
  console.log(`cli-bot: !ping → pong, bot answering with a cold \`wsync send\`: ${fmt(cold)}`);
  const warm: number[] = [];
  for (let i = 0; i < runs; i++)
    warm.push(
      await pingRound(async (id, text) => {
        botApi.p.stdin.write(
          `${JSON.stringify({ id: text, method: "send", params: { channel: id, text } })}\n`,
        );
        botApi.p.stdin.flush();
      }),
    );
  console.log(`cli-bot: !ping → pong, bot answering through \`wsync api\`: ${fmt(warm)}`);
  for (const p of [botListen, botApi]) p.p.kill("SIGTERM");

  // A bot account: its own key and token, one process that listens and answers (api --listen).
  const token = (await run("bot", ["bot", "create", "pingbot", "--channel", channel])).out.trim();
  const asBot = { WSYNC_BOT_TOKEN: token };
  await run("pingbot", ["send", channel, "ready"], undefined, asBot);
  const botSend: number[] = [];
  for (let i = 0; i < runs; i++)
    botSend.push((await run("pingbot", ["send", channel, `cold bot ${i}`], undefined, asBot)).ms);
  console.log(`cli-bot: dist/wsync send with WSYNC_BOT_TOKEN (cold process, spawn to exit): ${fmt(botSend)}`);
  const one = start("pingbot", ["api", "--listen", "--no-self"], asBot);
  await one.err.waitFor((l) => l.startsWith("Listening"), 30_000);
  const oneProcess: number[] = [];
  for (let i = 0; i < runs; i++) {
    const tag = `${++n}`;
    const t0 = performance.now();
    bobApi.p.stdin.write(
      `${JSON.stringify({ id: tag, method: "send", params: { channel, text: `!ping ${tag}` } })}\n`,
    );
    bobApi.p.stdin.flush();
    const ev = JSON.parse(
      await one.out.waitFor(
        (l) => JSON.parse(l).type === "item" && JSON.parse(l).text === `!ping ${tag}`,
        30_000,
      ),
    );
    one.p.stdin.write(
      `${JSON.stringify({ id: tag, method: "send", params: { channel: ev.channelId, text: `pong ${tag}` } })}\n`,
    );
    one.p.stdin.flush();
    await bobListen.out.waitFor((l) => JSON.parse(l).text === `pong ${tag}`, 30_000);
    oneProcess.push(performance.now() - t0);
  }
  console.log(
    `cli-bot: !ping → pong, a bot account in one \`wsync api --listen\` process: ${fmt(oneProcess)}`,
  );
  for (const p of [bobApi, bobListen, one]) p.p.kill("SIGTERM");
} finally {
  serve.kill("SIGTERM");
  await serve.exited;
  rmSync(dir, { recursive: true, force: true });
}

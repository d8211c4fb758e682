/**
 * A whole wsync bot: answers `!ping` with `pong` (as a reply) in every channel it was given.
 *
 *   wsync bot create pingbot --channel '#general' > pingbot.token    # as its owner, once
 *   WSYNC_BOT_TOKEN="$(cat pingbot.token)" npx bun examples/ping-bot.ts
 *
 * It runs `wsync` from PATH; set WSYNC_CMD to another command (from a clone: `npx bun cli/main.ts`).
 * docs/bots.md explains each step.
 */
import { WsyncBot } from "../packages/bot/index.ts";

const command = process.env.WSYNC_CMD?.split(" ").filter(Boolean);
const bot = await WsyncBot.start(command ? { command } : {});
const me = await bot.whoami();
console.error(`${me.handle} is answering !ping; Ctrl+C to stop`);

bot.onMessage(async (m) => {
  if (m.text?.trim() !== "!ping" || m.rich) return;
  await bot.reply(m.channelId, m.uri, "pong");
  await bot.markRead(m.channelId, m.seq);
});

for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => void bot.close().then(() => process.exit(0)));
process.exitCode = await bot.exited;

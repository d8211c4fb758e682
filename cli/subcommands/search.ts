import { existsSync, rmSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import type { WsyncClient } from "../../core/client/index.ts";
import type { Channel } from "../../core/protocol/index.ts";
import { parseQuery } from "../../core/search/index.ts";
import { displaySafe } from "../../core/slash-commands/display-safe.ts";
import {
  allChannels,
  type GlobalOptions,
  memberChannel,
  serverUrl,
  signedInClient,
  storePath,
} from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { time } from "../format.ts";
import { io } from "../prompt.ts";
import { deleteSearchIndex, SearchIndex, type StoredHit, searchIndexPath } from "../search-index.ts";
import { receiptOf, type SearchReceipt } from "../search-receipt.ts";

interface Opts extends GlobalOptions {
  channel?: string[];
  from?: string[];
  json?: boolean;
  limit?: string;
  backfill?: boolean;
  off?: boolean;
  on?: boolean;
}

const collect = (v: string, all: string[] = []) => [...all, v];

/** The JSON shape of one search result (docs/cli.md). */
export function hitJson(h: StoredHit) {
  return {
    uri: h.uri,
    channelId: h.channelId,
    channel: h.channelName,
    seq: h.seq,
    author: h.author,
    signedAt: new Date(h.signedAt).toISOString(),
    verified: h.verified,
    notes: h.notes,
    hasFile: h.hasFile,
    edited: h.edited,
    text: h.text,
    /** [start, end) offsets (UTF-16) of the matched terms in `text`. */
    matches: h.ranges,
  };
}

/** A result for a terminal: `#channel [time] (seq) handle ✓: text`, matches in reverse video on a terminal. */
export function hitLine(h: StoredHit, color: boolean): string {
  const name = h.channelName ? `#${displaySafe(h.channelName)}` : h.channelId;
  let text = "";
  let at = 0;
  for (const [s, e] of h.ranges) {
    text += displaySafe(h.text.slice(at, s));
    const hit = displaySafe(h.text.slice(s, e));
    text += color ? `\x1b[7m${hit}\x1b[27m` : hit;
    at = e;
  }
  text += displaySafe(h.text.slice(at));
  const flat = text.replace(/\r?\n/g, " ⏎ ").replace(/\t/g, " ");
  const mark = h.verified ? "✓" : "?";
  return `${name} [${time(new Date(h.signedAt).toISOString())}] (${h.seq}) ${displaySafe(h.author.handle)} ${mark}: ${flat}${h.edited ? " (edited)" : ""}`;
}

/** A progress bar on stderr, drawn only on a terminal. */
function progress(label: string, done: number, total: number, count: number): void {
  if (!process.stderr.isTTY) return;
  const width = 24;
  const f = total > 0 ? Math.min(1, done / total) : 1;
  const bar = "█".repeat(Math.round(f * width)).padEnd(width, "░");
  process.stderr.write(`\r\x1b[2K${label} ${bar} ${Math.round(f * 100)}% ${count} messages`);
}

/**
 * Reads a channel's history into the index, newest page first, until it reaches what an earlier
 * finished backfill covered (or the beginning). Returns how many messages it read, and how many of
 * them were new to the index.
 */
export async function backfillChannel(
  client: WsyncClient,
  receipt: SearchReceipt,
  index: SearchIndex,
  ch: Channel,
): Promise<{ read: number; added: number }> {
  index.setChannel(ch.id, ch.value.name);
  const sizeBefore = index.size;
  const covered = index.completeSeq(ch.id);
  const view = await client.open(ch.id);
  const top = view.lastSeq;
  let count = 0;
  const take = () => {
    const changes = receipt.fresh(ch.id, view.items);
    index.applyAll(changes);
    count += changes.filter((c) => c.op === "message").length;
  };
  const oldest = () =>
    Math.min(...view.items.map((i) => i.seq).filter((s) => Number.isInteger(s) && s > 0), top);
  const label = `#${displaySafe(ch.value.name)}`;
  take();
  while (view.hasMore && oldest() > covered) {
    progress(label, top - oldest(), top - Math.max(covered, 0), count);
    const before = view.items.length;
    await client.loadMore(ch.id);
    take();
    if (view.items.length === before) break;
  }
  progress(label, 1, 1, count);
  if (process.stderr.isTTY) process.stderr.write("\n");
  if (!view.hasMore || oldest() <= covered) index.setCompleteSeq(ch.id, top);
  return { read: count, added: index.size - sizeBefore };
}

export function registerSearchCommand(program: Command): void {
  program
    .command("search [query...]")
    .description(
      "search the messages this device has read (words, prefixes, 3+ letters anywhere; in:#channel from:handle before:/after:YYYY-MM-DD has:file)",
    )
    .option("--channel <channel>", "only this channel (id or #name; repeatable)", collect)
    .option("--from <handle>", "only messages from this person (repeatable)", collect)
    .option("--limit <n>", "how many results (1-1000)", "50")
    .option("--json", "print a JSON array")
    .option("--backfill", "first read the whole history of your channels (or of --channel) into the index")
    .option("--off", "turn search off on this device: delete the index and stop filling it")
    .option("--on", "turn search back on on this device")
    .action(async (words: string[], _o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as Opts;
      const path = searchIndexPath(storePath(serverUrl(o)));
      if (o.off && o.on) throw usageError("search: --off and --on together");
      if (o.off || o.on) {
        if (words.length || o.backfill) throw usageError("search: --off and --on take nothing else");
        if (o.off) {
          deleteSearchIndex(path);
          writeFileSync(`${path}.off`, "search is off on this device (wsync search --on)\n", { mode: 0o600 });
          io.err("Search is off on this device: its index is deleted and no longer filled\n");
        } else {
          rmSync(`${path}.off`, { force: true });
          io.err(
            "Search is on: messages are indexed as they are read; `wsync search --backfill` reads history\n",
          );
        }
        return;
      }
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw usageError("--limit must be 1 to 1000");
      const text = [...words, ...(o.from ?? []).map((f) => `from:${f.replace(/^@/, "")}`)].join(" ");
      const q = parseQuery(text);
      if (q.errors.length) throw usageError(`search: ${q.errors.join("; ")}`);
      if (!words.length && !o.backfill) throw usageError("search: what to search for? (or --backfill)");
      if (existsSync(`${path}.off`))
        throw new CliError("Search is off on this device: run `wsync search --on` first", ExitCode.usage);

      let channelIds: string[] | undefined;
      if (o.backfill) {
        const { client } = await signedInClient(o);
        const receipt = receiptOf(client);
        const index = receipt?.open();
        if (!receipt || !index) throw new CliError("Search is off on this device", ExitCode.usage);
        receipt.paused = true;
        const mine = (await allChannels(client)).filter((c) => c.isMember);
        const chosen = o.channel?.length
          ? await Promise.all(o.channel.map((r) => memberChannel(client, r)))
          : mine;
        if (!o.channel?.length) {
          // Channels this user left (or was removed from) leave the index.
          const ids = new Set(mine.map((c) => c.id));
          for (const id of index.channelIds()) if (!ids.has(id)) index.dropChannel(id);
        }
        let read = 0;
        let added = 0;
        for (const ch of chosen) {
          const r = await backfillChannel(client, receipt, index, ch);
          read += r.read;
          added += r.added;
        }
        receipt.paused = false;
        const chs = `${chosen.length} channel${chosen.length === 1 ? "" : "s"}`;
        io.err(`Read ${read} messages in ${chs}; ${added} new in the search index\n`);
        channelIds = o.channel?.length ? chosen.map((c) => c.id) : undefined;
        if (!words.length) return;
      }
      if (!existsSync(path)) {
        io.err("Nothing is indexed on this device yet: run `wsync search --backfill`\n");
        io.out(o.json ? "[]\n" : "");
        return;
      }
      const index = new SearchIndex(path);
      try {
        channelIds ??= o.channel?.length ? o.channel.map((r) => indexedChannel(index, r)) : undefined;
        const hits = index.search(q, { channelIds, limit });
        if (o.json) io.out(`${JSON.stringify(hits.map(hitJson))}\n`);
        else {
          const color = process.stdout.isTTY === true;
          io.out(hits.map((h) => `${hitLine(h, color)}\n`).join(""));
          if (hits.length === 0) io.err("No messages found\n");
        }
      } finally {
        index.close();
      }
    });
}

/** `--channel` without the network: an id, or `#name` of a channel in the index. */
function indexedChannel(index: SearchIndex, ref: string): string {
  const name = ref.replace(/^#/, "").toLowerCase();
  const rows = index.db
    .query<{ channel_id: string }, [string, string]>(
      "SELECT channel_id FROM channels WHERE channel_id = ? OR lower(name) = ?",
    )
    .all(ref, name);
  if (rows.length === 0)
    throw new CliError(`No indexed channel ${ref} (run \`wsync search --backfill\`)`, ExitCode.notFound);
  if (rows.length > 1)
    throw new CliError(
      `Several indexed channels are named ${ref}; use the id: ${rows.map((r) => r.channel_id).join(", ")}`,
      ExitCode.usage,
    );
  return (rows[0] as { channel_id: string }).channel_id;
}

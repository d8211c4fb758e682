import { createInterface } from "node:readline";
import type { Command } from "commander";
import { type ChannelView, newestSeq, unreadOf, type WsyncClient } from "../../core/client/index.ts";
import { findTarget, kickMember } from "../actions.ts";
import { allChannels, type GlobalOptions, memberChannel, signedInClient } from "../context.ts";
import { conversationJson } from "../direct-format.ts";
import { CliError, ExitCode, errorJson, usageError } from "../errors.ts";
import { channelJson, itemJson, memberJson, sendBlockedText } from "../format.ts";
import { exitWhenFlushed } from "../lifetime.ts";
import { READ_LIMIT_MAX, readLatest } from "../read-latest.ts";
import { sessionEndedText } from "../session-end.ts";
import { openDm, parseDmTarget } from "./dm.ts";
import { saveFile, sendFileCommand } from "./files.ts";
import { connected, LISTEN_RESCAN_MS, Listener, parseSince, untilSignal } from "./listen.ts";

/** The methods `wsync api` answers (docs/cli.md has their params and results). */
export const API_METHODS = [
  "whoami",
  "list",
  "read",
  "send",
  "reply",
  "react",
  "edit",
  "delete",
  "join",
  "leave",
  "invite",
  "kick",
  "members",
  "unread",
  "markRead",
  "dm",
  "upload",
  "download",
] as const;
type Method = (typeof API_METHODS)[number];

/** The longest request line read (a message is at most a few KB; this leaves room for JSON escaping). */
const MAX_LINE = 256 * 1024;

type Params = Record<string, unknown>;

const str = (p: Params, key: string): string => {
  const v = p[key];
  if (typeof v !== "string" || v === "") throw usageError(`params.${key}: a non-empty string`);
  return v;
};

async function writable(client: WsyncClient, ref: unknown): Promise<{ id: string; view: ChannelView }> {
  if (typeof ref !== "string" || ref === "") throw usageError("params.channel: a channel id, uri or #name");
  const ch = await memberChannel(client, ref);
  const view = await client.open(ch.id, { focus: false, reuse: true });
  if (view.sendBlocked) throw new CliError(sendBlockedText(view), ExitCode.security);
  return { id: ch.id, view };
}

/** Runs one request; the result is what `result` holds in the answer. */
export async function runApiMethod(client: WsyncClient, method: string, p: Params): Promise<unknown> {
  if (!API_METHODS.includes(method as Method))
    throw usageError(`method: one of ${API_METHODS.join(", ")} (got ${JSON.stringify(method)})`);
  switch (method as Method) {
    case "whoami": {
      const u = client.state.auth.user;
      return u ? { did: u.did, handle: u.handle, email: u.email, publicKey: u.publicKey } : null;
    }
    case "list":
      return (await allChannels(client)).map(channelJson);
    case "read": {
      const limit = p.limit === undefined ? 50 : p.limit;
      if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > READ_LIMIT_MAX)
        throw usageError(`params.limit: 1 to ${READ_LIMIT_MAX}`);
      const ch = await memberChannel(client, str(p, "channel"));
      const view = await readLatest(client, ch.id, limit, { focus: false });
      return view.items.slice(-limit).map(itemJson);
    }
    case "send": {
      const { id } = await writable(client, p.channel);
      return itemJson(await client.send(id, str(p, "text")));
    }
    case "reply": {
      const { id } = await writable(client, p.channel);
      const target = await findTarget(client, id, p.to);
      return itemJson(await client.reply(id, target, str(p, "text")));
    }
    case "react": {
      const { id } = await writable(client, p.channel);
      const target = await findTarget(client, id, p.to);
      if (p.remove !== undefined && typeof p.remove !== "boolean")
        throw usageError("params.remove: a boolean");
      return itemJson(await client.react(id, target, str(p, "emoji"), p.remove === true));
    }
    case "edit": {
      const { id } = await writable(client, p.channel);
      const target = await findTarget(client, id, p.to);
      return itemJson(await client.edit(id, target, str(p, "text")));
    }
    case "delete": {
      const { id } = await writable(client, p.channel);
      const target = await findTarget(client, id, p.to);
      await client.deleteMessage(target.uri, id);
      return { uri: target.uri, deleted: true };
    }
    case "join": {
      const view = await client.join(str(p, "channel"));
      return channelJson(view.channel);
    }
    case "leave": {
      const ch = await memberChannel(client, str(p, "channel"));
      await client.leave(ch.id);
      return { channelId: ch.id, left: true };
    }
    case "invite": {
      const ch = await memberChannel(client, str(p, "channel"));
      const handle = str(p, "handle");
      await client.invite(ch.id, handle);
      return { channelId: ch.id, handle, invited: true };
    }
    case "kick": {
      const ch = await memberChannel(client, str(p, "channel"));
      const t = await kickMember(client, ch, str(p, "handle"));
      return { channelId: ch.id, did: t.did, handle: t.handle, kicked: true };
    }
    case "members": {
      const ch = await memberChannel(client, str(p, "channel"));
      return (await client.members(ch.id)).map(memberJson);
    }
    case "unread":
      return unread(client, p.channel === undefined ? null : str(p, "channel"));
    case "markRead": {
      const ch = await memberChannel(client, str(p, "channel"));
      const view = await client.open(ch.id, { focus: false, reuse: true });
      const seq = p.seq === undefined ? newestSeq(view) : p.seq;
      if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0)
        throw usageError("params.seq: a whole number >= 0");
      await client.markRead(ch.id, seq);
      return { channelId: ch.id, lastReadSeq: client.state.readMarkers[ch.id] ?? 0 };
    }
    case "dm": {
      // params: {handle} (one person, several joined by commas, or "me"), optional {text}.
      const handles = parseDmTarget(str(p, "handle"), client.state.auth.user?.handle ?? null);
      if (p.text !== undefined && (typeof p.text !== "string" || !p.text.trim()))
        throw usageError("params.text: a non-empty string");
      const { conversation, view } = await openDm(client, handles);
      const json = conversationJson(conversation, client.state.auth.user?.did ?? null);
      if (p.text === undefined) return { conversation: json };
      if (view.sendBlocked) throw new CliError(sendBlockedText(view), ExitCode.security);
      return {
        conversation: json,
        item: itemJson(await client.send(conversation.channel.id, p.text as string)),
      };
    }
    case "upload": {
      // params: {channel, path, text?}: as `wsync send CHANNEL --file PATH [caption]`.
      const { id } = await writable(client, p.channel);
      const path = str(p, "path");
      if (p.text !== undefined && typeof p.text !== "string") throw usageError("params.text: a string");
      return itemJson(await sendFileCommand(client, id, path, (p.text as string | undefined) ?? "", false));
    }
    case "download": {
      // params: {channel, blob, path, force?}: as `wsync get CHANNEL/BLOB -o PATH [--force]`.
      const ref = str(p, "channel");
      const blob = str(p, "blob");
      const path = str(p, "path");
      if (p.force !== undefined && typeof p.force !== "boolean") throw usageError("params.force: a boolean");
      const ch = await memberChannel(client, ref);
      const file = await saveFile(client, ch.id, ref, blob, path, p.force === true, false);
      return { channelId: ch.id, blob, path, name: file.name, mime: file.mime, size: file.size };
    }
  }
}

/**
 * Per channel (or one channel): messages from others after this account's read marker (the one the
 * server keeps for all its devices, signed by its key), how many mention it, the marker's seq and the
 * newest seq. Counted among the records loaded (the newest page and what was loaded since);
 * `complete: false` when the marker is older than that, and the count is then a lower bound.
 */
async function unread(client: WsyncClient, ref: string | null) {
  const me = client.state.auth.user;
  if (!me) throw new CliError("Not signed in", ExitCode.auth);
  const markers = await client.refreshReadMarkers();
  const channels = ref
    ? [await memberChannel(client, ref)]
    : (await allChannels(client)).filter((c) => c.isMember);
  const out = [];
  for (const ch of channels) {
    const view = await client.open(ch.id, { focus: false, reuse: true });
    const lastReadSeq = markers[ch.id] ?? 0;
    const { count, mentions } = unreadOf(view, lastReadSeq, me);
    const oldest = view.items.find((i) => Number.isInteger(i.seq) && i.seq > 0)?.seq ?? 1;
    out.push({
      channelId: ch.id,
      channel: ch.value.name,
      unread: count,
      mentions,
      lastReadSeq,
      lastSeq: newestSeq(view),
      complete: !view.hasMore || oldest <= lastReadSeq + 1,
    });
  }
  return out;
}

/** The answer to one request line: `{id, ok: true, result}` or `{id, ok: false, error: {code, message}}`. */
export async function answer(client: WsyncClient, line: string): Promise<Record<string, unknown>> {
  let id: unknown = null;
  try {
    if (line.length > MAX_LINE) throw usageError(`request longer than ${MAX_LINE} bytes`);
    let req: unknown;
    try {
      req = JSON.parse(line);
    } catch {
      throw usageError("not a JSON object");
    }
    if (!req || typeof req !== "object" || Array.isArray(req)) throw usageError("not a JSON object");
    const r = req as { id?: unknown; method?: unknown; params?: unknown };
    id = r.id ?? null;
    if (typeof r.method !== "string") throw usageError("method: missing");
    if (
      r.params !== undefined &&
      (typeof r.params !== "object" || r.params === null || Array.isArray(r.params))
    )
      throw usageError("params: an object");
    const result = await runApiMethod(client, r.method, (r.params ?? {}) as Params);
    return { id, ok: true, result: result ?? null };
  } catch (e) {
    return { id, ok: false, error: errorJson(e) };
  }
}

interface ApiOpts extends GlobalOptions {
  listen?: boolean;
  since?: string[];
  tail?: string;
  self?: boolean;
}

export function registerApiCommand(program: Command): void {
  program
    .command("api")
    .description(
      "a long-lived process for scripts: one JSON request per line on standard input, one JSON answer per line (ids echoed); --listen also streams events",
    )
    .option("--listen", "also write every event of `listen --json` (answers then carry type: response)")
    .option(
      "--since <seq>",
      "with --listen: first the items after SEQ, or CHANNEL=SEQ (repeatable), as `listen`",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--tail <n>", "with --listen: first each channel's last N items")
    .option("--no-self", "with --listen: leave out your own messages")
    .allowExcessArguments(false)
    .action(async (_o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as ApiOpts;
      const since = parseSince(o.since ?? []);
      let tail: number | null = null;
      if (o.tail !== undefined) {
        tail = Number(o.tail);
        if (!Number.isInteger(tail) || tail < 0 || tail > 1000) throw usageError("--tail must be 0 to 1000");
      }
      if (!o.listen && (tail !== null || since.all !== null || since.per.size > 0 || o.self === false))
        throw usageError("--since, --tail and --no-self go with --listen");
      if (tail !== null && (since.all !== null || since.per.size > 0))
        throw usageError("--since and --tail cannot be used together");
      const { client } = await signedInClient(o);
      const write = (line: string) => process.stdout.write(`${line}\n`);
      const listener = o.listen
        ? new Listener(client, { json: true, self: o.self !== false, since, tail, write })
        : null;
      listener?.attach();
      client.events.on("session-ended", ({ reason }) => {
        process.stderr.write(`${sessionEndedText(reason)}\n`);
        void exitWhenFlushed(ExitCode.auth);
      });
      client.connect();
      await connected(client);
      let rescan: ReturnType<typeof setInterval> | null = null;
      if (listener) {
        await listener.start();
        process.stderr.write(`Listening to ${listener.channels} channel(s); requests on standard input\n`);
        rescan = setInterval(() => void listener.follow().catch(() => undefined), LISTEN_RESCAN_MS);
      }
      const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
      const serve = async () => {
        // One request at a time, answered in the order they came: a script can pipeline without ids.
        for await (const raw of lines) {
          const line = raw.trim();
          if (!line) continue;
          const a = await answer(client, line);
          // With --listen, answers and events share standard output: each line says which it is.
          write(JSON.stringify(listener ? { type: "response", ...a } : a));
        }
      };
      // End of input ends the process; with --listen so do Ctrl+C and SIGTERM (exit 0).
      const code = await (listener
        ? Promise.race([serve().then(() => ExitCode.ok), untilSignal()])
        : serve().then(() => ExitCode.ok));
      if (rescan) clearInterval(rescan);
      client.disconnect();
      if (listener) await exitWhenFlushed(code);
    });
}

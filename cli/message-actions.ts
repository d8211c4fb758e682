import type { TimelineItem, WsyncClient } from "../core/client/index.ts";
import { findTarget } from "./actions.ts";
import { CliError, ExitCode, usageError } from "./errors.ts";
import { sendBlockedText } from "./format.ts";

/**
 * Reply, react, edit and delete, shared by `wsync reply|react|edit|delete` and the screen's
 * `/reply`, `/react`, `/edit`, `/delete`: the same engine calls as `wsync api` and the web app
 * (signed, protocol v3). A message is named by its number in the channel, the `(42)` that `read`,
 * `tail` and the screen show (its seq), or by its uri.
 */

/** `42` (a seq) or an `at://` uri; anything else is a usage error. */
export function messageRef(word: string): number | string {
  if (/^\d{1,15}$/.test(word) && Number(word) > 0) return Number(word);
  if (word.startsWith("at://")) return word;
  throw usageError(`not a message number: ${word} (the number in brackets that read shows, e.g. 42)`);
}

/** The channel opened for writing: refused (exit 6) while a failed check stops sending. */
async function writable(client: WsyncClient, channelId: string): Promise<void> {
  const view = await client.open(channelId, { focus: false, reuse: true });
  if (view.sendBlocked) throw new CliError(sendBlockedText(view), ExitCode.security);
}

/** The engine refuses to send after a check fails midway: report the check, not its generic refusal. */
async function guarded<T>(client: WsyncClient, channelId: string, fn: () => Promise<T>): Promise<T> {
  return fn().catch((e: unknown) => {
    const now = client.view(channelId);
    throw now?.sendBlocked ? new CliError(sendBlockedText(now), ExitCode.security) : e;
  });
}

export async function replyTo(
  client: WsyncClient,
  channelId: string,
  ref: number | string,
  text: string,
): Promise<TimelineItem> {
  if (!text.trim()) throw usageError("the reply is empty");
  await writable(client, channelId);
  const target = await findTarget(client, channelId, ref);
  return guarded(client, channelId, () => client.reply(channelId, target, text));
}

export async function reactTo(
  client: WsyncClient,
  channelId: string,
  ref: number | string,
  emoji: string,
  remove = false,
): Promise<TimelineItem> {
  await writable(client, channelId);
  const target = await findTarget(client, channelId, ref);
  return guarded(client, channelId, () =>
    client.react(channelId, target, emoji, remove).catch((e: unknown) => {
      if (e instanceof Error && e.message === "A reaction is an emoji")
        throw usageError(`a reaction is one emoji (got ${JSON.stringify(emoji)})`);
      throw e;
    }),
  );
}

export async function editMessage(
  client: WsyncClient,
  channelId: string,
  ref: number | string,
  text: string,
): Promise<TimelineItem> {
  if (!text.trim()) throw usageError("the new text is empty (to remove a message, use delete)");
  await writable(client, channelId);
  const target = await findTarget(client, channelId, ref);
  if (target.author.did !== client.state.auth.user?.did)
    throw usageError(`message ${ref} is not yours: only your own messages can be edited`);
  if (target.deleted) throw usageError(`message ${ref} is deleted`);
  return guarded(client, channelId, () => client.edit(channelId, target, text));
}

export async function deleteMessageAt(
  client: WsyncClient,
  channelId: string,
  ref: number | string,
): Promise<TimelineItem> {
  const target = await findTarget(client, channelId, ref);
  if (target.deleted) throw usageError(`message ${ref} is already deleted`);
  await client.deleteMessage(target.uri, channelId);
  return target;
}

import type { Command } from "commander";
import { type GlobalOptions, memberChannel, signedInClient } from "../context.ts";
import { usageError } from "../errors.ts";
import { itemJson } from "../format.ts";
import { deleteMessageAt, editMessage, messageRef, reactTo, replyTo } from "../message-actions.ts";
import { textFromStdin } from "../prompt.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
  remove?: boolean;
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as Opts;

/** The words after the message number, as `send` takes them (none or `-`: standard input). */
async function textOf(words: string[], what: string): Promise<string> {
  const text = words.length ? words.join(" ") : undefined;
  const body = text === undefined || text === "-" ? await textFromStdin() : text;
  if (!body.trim()) throw usageError(`${what}: the text is empty`);
  return body.replace(/\n$/, "");
}

/**
 * `wsync reply`, `react`, `edit` and `delete`: a message named by its number in the channel (the
 * `(42)` that `read` and `tail` show). Each is one signed record through the same engine calls as
 * `wsync api` and the web app; they print the new record's uri (`--json`: the record).
 */
export function registerEditCommands(program: Command): void {
  program
    .command("reply <channel> <message> [text...]")
    .description("reply to a message (its number as read shows it): the words after it, or standard input")
    .option("--json", "print the reply as JSON")
    .allowExcessArguments(false)
    .action(async (ref: string, message: string, words: string[], _o, cmd: Command) => {
      const o = opts(cmd);
      const to = messageRef(message);
      const text = await textOf(words, "reply");
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const item = await replyTo(client, ch.id, to, text);
      process.stdout.write(o.json ? `${JSON.stringify(itemJson(item))}\n` : `${item.uri}\n`);
    });

  program
    .command("react <channel> <message> <emoji>")
    .description("react to a message with one emoji (--remove takes your reaction back)")
    .option("--remove", "take back your reaction with this emoji")
    .option("--json", "print the reaction as JSON")
    .allowExcessArguments(false)
    .action(async (ref: string, message: string, emoji: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const to = messageRef(message);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const item = await reactTo(client, ch.id, to, emoji, o.remove === true);
      process.stdout.write(o.json ? `${JSON.stringify(itemJson(item))}\n` : `${item.uri}\n`);
    });

  program
    .command("edit <channel> <message> [text...]")
    .description("replace the text of one of your messages: the words after it, or standard input")
    .option("--json", "print the edit as JSON")
    .allowExcessArguments(false)
    .action(async (ref: string, message: string, words: string[], _o, cmd: Command) => {
      const o = opts(cmd);
      const to = messageRef(message);
      const text = await textOf(words, "edit");
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const item = await editMessage(client, ch.id, to, text);
      process.stdout.write(o.json ? `${JSON.stringify(itemJson(item))}\n` : `${item.uri}\n`);
    });

  program
    .command("delete <channel> <message>")
    .description("delete a message (yours, or any in a channel you own); a signed deletion")
    .option("--json", "print JSON")
    .allowExcessArguments(false)
    .action(async (ref: string, message: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const to = messageRef(message);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const target = await deleteMessageAt(client, ch.id, to);
      process.stdout.write(
        o.json
          ? `${JSON.stringify({ uri: target.uri, seq: target.seq, deleted: true })}\n`
          : `Deleted message ${target.seq} in #${ch.value.name}\n`,
      );
    });
}

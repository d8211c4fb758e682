import type { Command } from "commander";
import type { ChannelView, WsyncClient } from "../../core/client/index.ts";
import type { Conversation } from "../../core/protocol/index.ts";
import { DirectLimits } from "../../core/protocol/index.ts";
import { type GlobalOptions, signedInClient } from "../context.ts";
import { conversationJson } from "../direct-format.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import { itemJson, sendBlockedText, viewLines } from "../format.ts";
import { textFromStdin } from "../prompt.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
}

/** A handle as typed: `bob`, `@bob` or `bob.example.org` (the server adds its suffix). */
const HANDLE_RE = /^@?[a-z0-9][a-z0-9.-]{0,252}$/i;

/**
 * The people of `wsync dm HANDLE`: one handle (the pair's conversation), several joined by commas (a
 * group), or `me` / your own handle (notes to self). Refused as a usage error (exit 2) when malformed.
 */
export function parseDmTarget(target: string, myHandle: string | null): string[] {
  const parts = target.split(",").map((p) => p.trim());
  if (parts.some((p) => !HANDLE_RE.test(p))) {
    throw usageError(`dm: not a handle: ${JSON.stringify(target)} (give bob, @bob or bob,carol)`);
  }
  // `me` and your own handle both mean notes to self (the server drops the caller from the list).
  const handles = [...new Set(parts.map((p) => p.replace(/^@/, "").toLowerCase()))].filter(
    (h) => h !== "me" && h !== myHandle,
  );
  if (handles.length > DirectLimits.maxMembers - 1) {
    throw usageError(`dm: a conversation has at most ${DirectLimits.maxMembers} people, you included`);
  }
  return handles;
}

/** Opens (or finds) the conversation and loads it; exit 6 when a security check blocks it. */
export async function openDm(
  client: WsyncClient,
  handles: string[],
): Promise<{ conversation: Conversation; view: ChannelView }> {
  return client.direct.open(handles, { focus: false });
}

export function registerDmCommand(program: Command): void {
  program
    .command("dm <handle> [text...]")
    .description(
      "write to a person (bob), a few (bob,carol) or yourself (me): opens the conversation, the same one every time; without text, prints it",
    )
    .option("--json", "print JSON (the sent message, or the conversation and its messages)")
    .action(async (target: string, words: string[], _o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as Opts;
      // Arguments are checked before anything touches the network or the session.
      parseDmTarget(target, null);
      const text = words.length ? words.join(" ") : undefined;
      const { client } = await signedInClient(o);
      const handles = parseDmTarget(target, client.state.auth.user?.handle ?? null);
      const body = text === "-" ? await textFromStdin() : text;
      if (body !== undefined && !body.trim()) throw usageError("dm: the message is empty");
      const { conversation, view } = await openDm(client, handles);
      const me = client.state.auth.user?.did ?? null;
      if (body === undefined) {
        if (o.json) {
          const out = { conversation: conversationJson(conversation, me), items: view.items.map(itemJson) };
          process.stdout.write(`${JSON.stringify(out)}\n`);
        } else
          process.stdout.write(
            viewLines(view.items, view)
              .map((l) => `${l}\n`)
              .join(""),
          );
        return;
      }
      if (view.sendBlocked) throw new CliError(sendBlockedText(view), ExitCode.security);
      const item = await client.send(conversation.channel.id, body.replace(/\n$/, "")).catch((e: unknown) => {
        const now = client.view(conversation.channel.id);
        throw now?.sendBlocked ? new CliError(sendBlockedText(now), ExitCode.security) : e;
      });
      process.stdout.write(
        o.json
          ? `${JSON.stringify({ conversation: conversationJson(conversation, me), item: itemJson(item) })}\n`
          : `${item.uri}\n`,
      );
    });
}

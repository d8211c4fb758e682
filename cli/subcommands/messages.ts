import type { Command } from "commander";
import type { ChannelView, SecurityWarning, TimelineItem } from "../../core/client/index.ts";
import { SecurityText } from "../../core/client/view/security-text.ts";
import { displaySafe } from "../../core/slash-commands/display-safe.ts";
import { ConnectionText, followConnection } from "../connection-notes.ts";
import { type GlobalOptions, memberChannel, signedInClient } from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";
import {
  itemJson,
  itemLine,
  removedJson,
  removedText,
  sendBlockedText,
  viewLines,
  warningJson,
  warningKey,
  warningLine,
} from "../format.ts";
import { exitWhenFlushed } from "../lifetime.ts";
import { textFromStdin } from "../prompt.ts";
import { READ_LIMIT_MAX, readLatest } from "../read-latest.ts";
import { SeqOrder } from "../seq-order.ts";
import { sessionEndedText } from "../session-end.ts";
import { sendFileCommand } from "./files.ts";

interface Opts extends GlobalOptions {
  json?: boolean;
  file?: string;
  limit?: string;
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as Opts;

/** The engine refuses to send after a failed check; the CLI says which, with its own exit code. */
const sendBlocked = (view: Pick<ChannelView, "warnings">) =>
  new CliError(sendBlockedText(view), ExitCode.security);

export function registerMessageCommands(program: Command): void {
  program
    .command("send <channel> [text...]")
    .description(
      "send a message: the words after the channel, joined by spaces as echo does (- or none: standard input)",
    )
    .option("--json", "print the sent message as JSON")
    .option("--file <path>", "send a file, encrypted (the words after the channel are its caption)")
    .action(async (ref: string, words: string[], _o, cmd: Command) => {
      const o = opts(cmd);
      if (o.file) return sendFileAndPrint(o, ref, o.file, words.join(" "));
      // `wsync send '#g' hello world` sends "hello world", as `echo hello world` prints it.
      const text = words.length ? words.join(" ") : undefined;
      const body = text === undefined || text === "-" ? await textFromStdin() : text;
      if (!body.trim()) throw usageError("send: the message is empty");
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const view = await client.open(ch.id);
      if (view.sendBlocked) throw sendBlocked(view);
      const item = await client.send(ch.id, body.replace(/\n$/, "")).catch((e: unknown) => {
        // A check can fail while sending (the server reports an older epoch): report that, not the
        // engine's generic refusal.
        const now = client.view(ch.id);
        throw now?.sendBlocked ? sendBlocked(now) : e;
      });
      process.stdout.write(o.json ? `${JSON.stringify(itemJson(item))}\n` : `${item.uri}\n`);
    });

  program
    .command("read <channel>")
    .description("print the latest messages, decrypted and verified")
    .option("--limit <n>", `how many records (1-${READ_LIMIT_MAX})`, "50")
    .option("--json", "print JSON")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > READ_LIMIT_MAX)
        throw usageError(`--limit must be 1 to ${READ_LIMIT_MAX}`);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      // Opening loads one page (50 records); older pages until --limit is met or history ends.
      const view = await readLatest(client, ch.id, limit);
      const items = view.items.slice(-limit);
      // Warnings follow the items in the same array, as tail --json puts them in the same stream.
      if (o.json) {
        const out = [...items.map(itemJson), ...view.warnings.map(warningJson)];
        process.stdout.write(`${JSON.stringify(out)}\n`);
      } else
        process.stdout.write(
          viewLines(items, view)
            .map((l) => `${l}\n`)
            .join(""),
        );
    });

  program
    .command("tail <channel>")
    .description(
      "follow live messages (NDJSON with --json); Ctrl+C stops; exits 7 if you are kicked from the channel",
    )
    .option("--json", "one JSON object per line")
    .action(async (ref: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const print = (i: TimelineItem) =>
        process.stdout.write(o.json ? `${JSON.stringify(itemJson(i))}\n` : `${itemLine(i)}\n`);
      // A warning can arrive as an event and also sit in the view after open: print each once.
      const warned = new Set<string>();
      const warn = (w: SecurityWarning) => {
        if (w.channelId !== ch.id || warned.has(warningKey(w))) return;
        warned.add(warningKey(w));
        process.stdout.write(o.json ? `${JSON.stringify(warningJson(w))}\n` : `${warningLine(w)}\n`);
      };
      // Live records in seq order: a later one waits while the client fills a gap from history.
      const order = new SeqOrder(
        (channelId) => client.gapsSettled(channelId),
        (_channelId, item) => print(item),
      );
      client.events.on("item", ({ channelId, item }) => {
        if (channelId === ch.id && !item.sending) order.push(channelId, item);
      });
      client.events.on("security-warning", warn);
      client.events.on("session-ended", ({ reason }) => {
        process.stderr.write(`${sessionEndedText(reason)}\n`);
        void exitWhenFlushed(ExitCode.auth);
      });
      // Kicked (or left from elsewhere): say so, then end with its own code instead of waiting forever.
      client.events.on("removed", (r) => {
        if (r.channelId !== ch.id) return;
        const name = `#${displaySafe(r.name ?? ch.value.name)}`;
        if (o.json) process.stdout.write(`${JSON.stringify(removedJson(r, ch.value.name))}\n`);
        else process.stdout.write(`*** ${removedText(r.reason, name)}\n`);
        client.disconnect();
        void exitWhenFlushed(ExitCode.removed);
      });
      client.connect();
      await new Promise<void>((resolve) => {
        const off = client.events.on("change", (s) => {
          if (s.connection === "connected") {
            off();
            resolve();
          }
        });
      });
      const view = await client.open(ch.id);
      order.start(ch.id, Math.max(0, ...view.items.map((i) => i.seq).filter(Number.isInteger)));
      for (const w of view.warnings) warn(w);
      process.stderr.write(`Following ${ch.id}; Ctrl+C to stop\n`);
      // A dropped connection and its return are said on stderr (stdout stays the messages).
      const stopNotes = followConnection(client, {
        lost: () => process.stderr.write(`wsync: ${ConnectionText.lost}\n`),
        back: (n, c) => process.stderr.write(`wsync: ${ConnectionText.back(n, c)}\n`),
      });
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      stopNotes();
      client.disconnect();
    });

  program
    .command("verify <handle>")
    .description("show both safety numbers, to compare out of band")
    .option("--accept", "trust this person's current key (after comparing)")
    .option("--json", "print JSON")
    .action(async (handle: string, _o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as GlobalOptions & { accept?: boolean; json?: boolean };
      const { client } = await signedInClient(o);
      const did = await client.didOf(handle);
      const n = await client.safetyNumbers(did);
      if (o.json) {
        const accepted = n.theirKeyChanged && o.accept === true;
        if (accepted) await client.acceptKeyChange(did, n.theirKey);
        process.stdout.write(
          `${JSON.stringify({ did, handle, mine: n.mine, theirs: n.theirs, pair: n.pair, keyChanged: n.theirKeyChanged, accepted, proof: n.proof })}\n`,
        );
        return;
      }
      process.stdout.write(
        `Your safety number:        ${n.mine}\n${handle}'s safety number: ${n.theirs}\nTogether: ${n.pair}\n`,
      );
      const proof = SecurityText.keyProof(n.proof, handle);
      if (proof) process.stdout.write(`ATProto: ${proof}\n`);
      if (n.theirKeyChanged) {
        if (o.accept) {
          await client.acceptKeyChange(did, n.theirKey);
          process.stdout.write("Accepted their new key.\n");
        } else {
          process.stderr.write(
            "Their key changed since you first saw it. Compare, then run again with --accept.\n",
          );
        }
      }
    });
}

async function sendFileAndPrint(o: Opts, ref: string, path: string, caption: string): Promise<void> {
  const { client } = await signedInClient(o);
  const ch = await memberChannel(client, ref);
  const view = await client.open(ch.id);
  if (view.sendBlocked) throw sendBlocked(view);
  const item = await sendFileCommand(client, ch.id, path, caption);
  process.stdout.write(o.json ? `${JSON.stringify(itemJson(item))}\n` : `${item.uri}\n`);
}

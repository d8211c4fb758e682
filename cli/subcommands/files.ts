import { link, open, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Command } from "commander";
import type { TimelineItem, WsyncClient } from "../../core/client/index.ts";
import type { FileInfo } from "../../core/crypto/file-message.ts";
import { type GlobalOptions, memberChannel, signedInClient } from "../context.ts";
import { CliError, ExitCode, usageError } from "../errors.ts";

interface GetOpts extends GlobalOptions {
  output?: string;
  force?: boolean;
}

/** A progress line on stderr, only on a terminal (scripts get clean output). */
function progress(what: string): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (done, total) => {
    const pct = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0;
    const bar = "#".repeat(Math.floor(pct / 5)).padEnd(20, ".");
    process.stderr.write(`\r${what} [${bar}] ${pct}%${pct === 100 ? "\n" : ""}`);
  };
}

async function* readFileStream(path: string): AsyncGenerator<Uint8Array> {
  // Read in pieces: a file is never held whole in memory.
  const file = await open(path, "r");
  try {
    const buf = new Uint8Array(1024 * 1024);
    for (;;) {
      const { bytesRead } = await file.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return;
      yield buf.slice(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}

/** `wsync send CHANNEL --file PATH [caption...]`: called by `send` when --file is given. */
export async function sendFileCommand(
  client: WsyncClient,
  channelId: string,
  path: string,
  caption: string,
  /** false in `wsync api`: its standard error is the program's, not a person's. */
  showProgress = true,
): Promise<TimelineItem> {
  let size: number;
  try {
    const s = await stat(path);
    if (!s.isFile()) throw usageError(`send: ${path} is not a file`);
    size = s.size;
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`send: cannot read ${path}`, ExitCode.notFound);
  }
  const files = await client.files();
  const onProgress = showProgress ? progress(`Sending ${basename(path)}`) : undefined;
  return files.send(
    channelId,
    {
      name: basename(path),
      // Bun names the type by the extension; unknown ones are sent as bytes.
      mime: Bun.file(path).type.split(";")[0] || "application/octet-stream",
      size,
      open: () => readFileStream(path),
      text: caption,
      ...(onProgress ? { onProgress } : {}),
    },
    // The server names its own limit (413); it may be set higher than the default.
    Number.POSITIVE_INFINITY,
  );
}

/**
 * Downloads, checks and decrypts the file `blob` of channel `channelId` into `out`: the key from the
 * verified message that carries it, written beside the target and moved into place only when every
 * chunk opened (a changed or cut-off file never lands under its name); never over an existing file
 * without `force`. What `wsync get` and `wsync api` `download` do.
 */
export async function saveFile(
  client: WsyncClient,
  channelId: string,
  ref: string,
  blob: string,
  out: string,
  force: boolean,
  showProgress = true,
): Promise<FileInfo> {
  if (!/^[0-9a-f]{32}$/.test(blob)) throw usageError("blob: the 32 hex characters read shows");
  if (!force && (await stat(out).catch(() => null)))
    throw new CliError(`get: ${out} exists (--force replaces it)`, ExitCode.conflict);
  const item = await findFile(client, channelId, blob);
  if (!item?.file)
    throw new CliError(`get: no message in ${ref} carries the file ${blob}`, ExitCode.notFound);
  // The key comes from the message: only a verified one is trusted to say what the file is.
  if (!item.verified)
    throw new CliError("get: the message carrying this file did not verify; not saved", ExitCode.security);
  const files = await client.files();
  // Straight from the object store when the server hands out presigned links (S3).
  files.blobs.direct = true;
  const plain = await files.open(
    item.file,
    showProgress ? progress(`Receiving ${item.file.name}`) : undefined,
  );
  const temp = join(dirname(out), `.${basename(out)}.${crypto.randomUUID()}.part`);
  const handle = await open(temp, "wx", 0o600);
  try {
    for await (const piece of plain) await handle.write(piece);
    await handle.sync();
  } catch (e) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  await handle.close();
  if (force) await rename(temp, out);
  else {
    // link() fails if the name appeared meanwhile: never overwrite without --force.
    try {
      await link(temp, out);
    } catch {
      await unlink(temp).catch(() => undefined);
      throw new CliError(`get: ${out} exists (--force replaces it)`, ExitCode.conflict);
    }
    await unlink(temp);
  }
  return item.file;
}

/** `<channel>/<blob>`: the channel as every command takes it, and the file's blob id (as read shows it). */
function parseFileUri(uri: string): { channel: string; blob: string } {
  const at = uri.lastIndexOf("/");
  const channel = uri.slice(0, at);
  const blob = uri.slice(at + 1);
  if (at <= 0 || !/^[0-9a-f]{32}$/.test(blob))
    throw usageError("get: the file is CHANNEL/BLOB, e.g. '#general/<the blob read shows>'");
  return { channel, blob };
}

/** Finds the message that carries the blob, loading older pages while there are any. */
async function findFile(client: WsyncClient, channelId: string, blob: string): Promise<TimelineItem | null> {
  const view = await client.open(channelId);
  for (;;) {
    const found = view.items.find((i) => i.file?.blob === blob && i.state === "success" && !i.deleted);
    if (found) return found;
    if (!view.hasMore) return null;
    const before = view.items.length;
    await client.loadMore(channelId);
    if (view.items.length === before) return null;
  }
}

export function registerFileCommands(program: Command): void {
  program
    .command("get <file>")
    .description("download and decrypt a file: CHANNEL/BLOB (the blob read shows), to -o PATH")
    .requiredOption("-o, --output <path>", "where to save it")
    .option("--force", "replace the file at -o if it exists")
    .allowExcessArguments(false)
    .action(async (uri: string, _o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as GetOpts;
      const { channel: ref, blob } = parseFileUri(uri);
      const out = o.output as string;
      if (!o.force && (await stat(out).catch(() => null)))
        throw new CliError(`get: ${out} exists (--force replaces it)`, ExitCode.conflict);
      const { client } = await signedInClient(o);
      const ch = await memberChannel(client, ref);
      const file = await saveFile(client, ch.id, ref, blob, out, o.force === true);
      process.stderr.write(`Saved ${file.name} (${file.size} bytes) to ${out}\n`);
      client.disconnect();
    });
}

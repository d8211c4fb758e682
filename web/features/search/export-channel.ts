import type { WsyncClient } from "../../../core/client/index.ts";
import {
  EXPORT_EXTENSIONS,
  EXPORT_MIME,
  type ExportFormat,
  exportAs,
  readWholeHistory,
} from "../../../core/export/export.ts";
import { saveBlob } from "../../components/save-blob.ts";

/**
 * The info panel's export (issue 32), loaded on first use: the channel's whole decrypted history,
 * read page by page into the open view, written by core's exporter (the same code as `wsync export`:
 * authors, signed times, verification states, integrity notes and the channel's warnings), and handed
 * to the browser as a download. Nothing leaves the page: the file is made from a Blob in memory.
 */

/** `deploy-2026-11-27.json`: the channel's name, kept to characters every file system accepts. */
export function exportFileName(channelName: string, format: ExportFormat, now: Date): string {
  const base =
    channelName
      .normalize("NFKC")
      .replace(/[^\p{L}\p{N}._-]+/gu, "-")
      .replace(/^[.-]+|-+$/g, "") || "channel";
  const pad = (n: number) => String(n).padStart(2, "0");
  const day = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  return `${base.slice(0, 80)}-${day}.${EXPORT_EXTENSIONS[format]}`;
}

export async function exportChannel(
  client: WsyncClient,
  channelId: string,
  format: ExportFormat,
  progress: (records: number) => void,
): Promise<{ name: string; messages: number }> {
  const view = await readWholeHistory(client, channelId, progress, { reuse: true });
  const me = client.state.auth.user;
  const now = new Date();
  const text = exportAs(
    format,
    {
      channel: { id: channelId, name: view.channel.value.name },
      server: window.location.origin,
      by: { did: me?.did ?? "", handle: me?.handle ?? "" },
      at: now.toISOString(),
    },
    view,
  );
  const name = exportFileName(view.channel.value.name, format, now);
  saveBlob(new Blob([text], { type: `${EXPORT_MIME[format]};charset=utf-8` }), name);
  return { name, messages: view.items.filter((i) => i.kind === "message").length };
}

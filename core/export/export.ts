import {
  type ChannelView,
  type PresentedItem,
  presentTimeline,
  SecurityText,
  type TimelineItem,
  type WsyncClient,
} from "../client/index.ts";
import { displaySafe } from "../slash-commands/display-safe.ts";
import {
  deletedText,
  epochText,
  itemJson,
  missingText,
  notesText,
  notifyText,
  viewLines,
  warningJson,
} from "./rows.ts";

/**
 * A channel's decrypted history as JSON, HTML or text (`wsync export`, docs/cli.md, and the web's
 * info panel: one implementation for both), with each message's author, signed time, verification
 * state and integrity notes, and the channel's security warnings. What a reader's client shows (edits
 * applied, reactions counted, core's rich.ts) is what is exported; the raw records stay in the JSON
 * beside it.
 */

export type ExportFormat = "json" | "html" | "txt";
export const EXPORT_FORMATS: readonly ExportFormat[] = ["json", "html", "txt"];

export interface ExportMeta {
  channel: { id: string; name: string };
  server: string;
  by: { did: string; handle: string };
  /** ISO time of the export. */
  at: string;
}

type View = Pick<ChannelView, "items" | "warnings" | "sendBlocked">;

/** A message's verification as words: "verified", "not verified", "failed to decrypt". */
export function verification(i: TimelineItem): "verified" | "not verified" | "failed" | "n/a" {
  if (i.kind !== "message") return "n/a";
  return i.state === "failed" ? "failed" : i.verified ? "verified" : "not verified";
}

export function exportJson(meta: ExportMeta, view: View): string {
  const shown = presentTimeline(view.items, meta.by.did);
  return `${JSON.stringify(
    {
      format: "wsync-export/1",
      channel: meta.channel,
      server: meta.server,
      exportedBy: meta.by,
      exportedAt: meta.at,
      warnings: view.warnings.map(warningJson),
      sendBlocked: view.sendBlocked,
      items: shown.map((p) => ({
        ...itemJson(p.item),
        verification: verification(p.item),
        shownText: p.text,
        edited: p.edited,
        editConflict: p.editConflict,
        reactions: p.reactions.map((r) => ({ emoji: r.emoji, count: r.count })),
      })),
      // Edits and reactions are not rows of their own; their signed records are kept here.
      records: view.items.filter((i) => i.rich?.type === "edit" || i.rich?.type === "reaction").map(itemJson),
    },
    null,
    2,
  )}\n`;
}

export function exportTxt(meta: ExportMeta, view: View): string {
  const head = [
    `# #${meta.channel.name} (${meta.channel.id}) on ${meta.server}`,
    `# exported by ${meta.by.handle} at ${meta.at}`,
    "# times are the authors' signed times; ✓ verified, ? not verified, ✗ failed to decrypt",
    "",
  ];
  return `${[...head, ...viewLines(view.items, view)].join("\n")}\n`;
}

/** Text for HTML: every character that could open markup or an attribute is escaped. */
export function escapeHtml(s: string): string {
  return s
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** Line breaks kept; controls and bidi overrides (which could make one name pose as another) made visible. */
const safeLines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => displaySafe(l.replace(/\t/g, "    ")))
    .join("\n");

function rowHtml(p: PresentedItem): string {
  const i = p.item;
  const e = escapeHtml;
  const when = i.signedAt ?? i.createdAt;
  const time = `<time datetime="${e(when)}">${e(when.replace("T", " ").replace(/\.\d+Z$/, "Z"))}</time>`;
  let body: string;
  let cls: string = i.kind;
  if (i.kind === "message" && i.deleted) {
    body = `<span class="sys">${e(deletedText(i.deleted))}</span>`;
    cls = "deleted";
  } else if (i.kind === "message" && i.state === "failed") {
    body = `<span class="sys">${e(i.error ?? "could not be decrypted")}</span>`;
  } else if (i.kind === "message") {
    const reply =
      p.replyTo === null
        ? ""
        : p.replyTo.loaded
          ? `<blockquote>${e(p.replyTo.author.handle)}: ${e(safeLines(p.replyTo.text ?? ""))}</blockquote>`
          : "<blockquote>(an earlier message)</blockquote>";
    const reactions = p.reactions.length
      ? ` <span class="reactions">${p.reactions.map((r) => `${e(r.emoji)} ${r.count}`).join(", ")}</span>`
      : "";
    body = `${reply}<span class="text">${e(safeLines(p.text ?? ""))}</span>${p.edited ? ' <span class="sys">(edited)</span>' : ""}${p.editConflict ? ' <span class="sys">(edit conflict)</span>' : ""}${reactions}`;
  } else if (i.kind === "notify") body = `<span class="sys">${e(notifyText(i))}</span>`;
  else if (i.kind === "epoch") body = `<span class="sys">${e(epochText(i))}</span>`;
  else body = `<span class="sys">${e(missingText(i))}</span>`;
  const v = verification(i);
  const mark = v === "n/a" ? "" : `<span class="v ${v.replace(" ", "-")}" title="${e(v)}">${e(v)}</span>`;
  const notes = notesText(i).trim();
  const author = i.kind === "message" ? `<b>${e(i.author.handle)}</b> ` : "";
  return `<li class="${e(cls)}" id="seq-${e(String(i.seq))}">${time} ${author}${mark} ${body}${notes ? ` <span class="notes">${e(notes)}</span>` : ""}</li>`;
}

export function exportHtml(meta: ExportMeta, view: View): string {
  const e = escapeHtml;
  const shown = presentTimeline(view.items, meta.by.did);
  const warnings = view.warnings.map((w) => `<li>${e(w.text)}</li>`);
  if (view.sendBlocked) warnings.push(`<li>${e(SecurityText.sendBlocked)}</li>`);
  // No script, no external resource: the CSP forbids both even if a text escaped its escaping.
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>#${e(meta.channel.name)}: wsync export</title>
<style>body{font:14px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
ol{list-style:none;padding:0}li{padding:.25rem 0;white-space:pre-wrap;overflow-wrap:anywhere}time{color:#666;font-size:.85em}
.sys{color:#666;font-style:italic}.v{font-size:.75em;border-radius:3px;padding:0 .3em}.verified{background:#dfd}
.not-verified{background:#ffd}.failed{background:#fdd}.notes{color:#a40}.warnings{background:#fee;padding:.5rem 1rem}
blockquote{margin:0 0 0 1rem;color:#555}</style></head>
<body><h1>#${e(meta.channel.name)}</h1>
<p>Channel ${e(meta.channel.id)} on ${e(meta.server)}, exported by ${e(meta.by.handle)} at ${e(meta.at)}. Times are the authors' signed times; each message says whether its signature was verified on this device.</p>
${warnings.length ? `<ul class="warnings">${warnings.join("\n")}</ul>` : ""}
<ol>
${shown.map(rowHtml).join("\n")}
</ol></body></html>
`;
}

export function exportAs(format: ExportFormat, meta: ExportMeta, view: View): string {
  return format === "json"
    ? exportJson(meta, view)
    : format === "html"
      ? exportHtml(meta, view)
      : exportTxt(meta, view);
}

/** The file name extension of each format (the web's download is named `CHANNEL-DATE.EXT`). */
export const EXPORT_EXTENSIONS: Record<ExportFormat, string> = { json: "json", html: "html", txt: "txt" };
export const EXPORT_MIME: Record<ExportFormat, string> = {
  json: "application/json",
  html: "text/html",
  txt: "text/plain",
};

/**
 * Opens a channel and reads its whole history into the view, page by page (what both exports write
 * out). `progress` is told how many records are loaded after each page. Stops if a page adds nothing.
 */
export async function readWholeHistory(
  client: Pick<WsyncClient, "open" | "loadMore">,
  channelId: string,
  progress?: (records: number) => void,
  opts: { reuse?: boolean } = {},
): Promise<ChannelView> {
  // `reuse`: the page keeps the view it shows (the web); the CLI opens afresh.
  const view = await client.open(channelId, opts.reuse ? { focus: false, reuse: true } : {});
  while (view.hasMore) {
    const before = view.items.length;
    progress?.(before);
    await client.loadMore(channelId);
    if (view.items.length === before) break;
  }
  return view;
}

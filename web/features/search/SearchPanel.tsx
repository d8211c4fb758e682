import { useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { Modal } from "../../components/Modal.tsx";
import { host } from "./host.ts";
import { openAtMessage } from "./open-at.ts";
import {
  runSearch,
  type SearchProgress,
  searchProgress,
  startSearch,
  turnSearchOff,
  turnSearchOn,
} from "./search-client.ts";
import type { SearchReply } from "./worker-protocol.ts";

type Hit = SearchReply["hits"][number];

/** The words of the search panel. */
export const SearchText = {
  title: "Search messages",
  placeholder: 'words, "a phrase", in:#channel from:handle before:/after:YYYY-MM-DD has:file',
  none: "No messages found",
  empty: "Search every channel and conversation this device can read.",
  off: "Search is off on this device: nothing is indexed or kept.",
  turnOn: "Turn search on",
  turnOff: "Turn off on this device",
  notShown: "That message could not be shown (deleted since, or no longer loadable).",
  edited: "(edited)",
} as const;

function statusLine(p: SearchProgress): string {
  const n = `${p.indexed.toLocaleString()} messages indexed`;
  switch (p.status) {
    case "starting":
      return "Opening the index…";
    case "indexing":
      return `Indexing ${p.channelsDone + 1}/${p.channelsTotal}${p.current ? ` #${host().displaySafe(p.current)}` : ""} ${Math.round(p.fraction * 100)}% · ${n}`;
    case "paused":
      return `Indexing paused while the tab is hidden · ${n}`;
    case "ready":
      return `Up to date · ${n}`;
    case "error":
      return `Indexing stopped: ${p.error ?? "error"} · ${n}`;
    default:
      return "";
  }
}

/** The text of a result with its matches marked (<mark>), as text nodes: never HTML from a message. */
function Marked({ text, ranges }: { text: string; ranges: readonly (readonly [number, number])[] }) {
  const parts: React.ReactNode[] = [];
  let at = 0;
  for (const [s, e] of ranges) {
    if (s > at) parts.push(text.slice(at, s));
    parts.push(<mark key={s}>{text.slice(s, e)}</mark>);
    at = e;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

/** Long texts are cut around the first match so it shows. */
function excerpt(h: Hit): { text: string; ranges: [number, number][] } {
  const MAX = 240;
  const flat = host().displaySafe(h.text).replace(/\s+/g, " ");
  if (flat.length !== h.text.length || h.text.length <= MAX) {
    return flat.length === h.text.length
      ? { text: flat, ranges: h.ranges }
      : { text: flat.slice(0, MAX), ranges: [] };
  }
  const first = h.ranges[0]?.[0] ?? 0;
  const from = Math.max(0, first - 60);
  const text = `${from > 0 ? "…" : ""}${flat.slice(from, from + MAX)}`;
  const shift = (from > 0 ? 1 : 0) - from;
  const ranges = h.ranges
    .map(([s, e]) => [s + shift, e + shift] as [number, number])
    .filter(([s, e]) => s >= 0 && e <= text.length);
  return { text, ranges };
}

export function SearchPanel({ query: initial, onClose }: { query: string; onClose: () => void }) {
  const p = useSnapshot(searchProgress);
  const [query, setQuery] = useState(initial);
  const [reply, setReply] = useState<SearchReply | null>(null);
  const [at, setAt] = useState(0);
  const [note, setNote] = useState<string | null>(null);
  const asked = useRef(0);
  const close = onClose;
  useEffect(() => {
    void startSearch().catch(() => undefined);
  }, []);
  // Asks again as the query changes and as the index grows (a backfill under way).
  // biome-ignore lint/correctness/useExhaustiveDependencies: the index's size and status are the triggers.
  useEffect(() => {
    const q = query.trim();
    if (!q) {
      setReply(null);
      return;
    }
    const n = ++asked.current;
    const t = setTimeout(() => {
      void runSearch(q).then(
        (r) => {
          if (n === asked.current) setReply(r);
        },
        () => undefined,
      );
    }, 120);
    return () => clearTimeout(t);
  }, [query, p.indexed, p.status]);
  const hits = reply?.hits ?? [];
  const choose = (h: Hit | undefined) => {
    if (!h) return;
    close();
    void openAtMessage({ ...h.message }).then((shown) => {
      if (!shown) setNote(SearchText.notShown);
    });
  };
  return (
    <Modal
      title={SearchText.title}
      labelledBy="search-title"
      className="search-panel"
      onEscape={close}
      portal
    >
      {p.status === "off" ? (
        <p className="search-status" data-testid="search-status">
          {SearchText.off}{" "}
          <button type="button" onClick={() => void turnSearchOn()}>
            {SearchText.turnOn}
          </button>
        </p>
      ) : (
        <>
          <input
            className="search-input"
            type="search"
            aria-label="Search messages"
            placeholder={SearchText.placeholder}
            autoComplete="off"
            value={query}
            onChange={(e) => {
              setQuery(e.target.value);
              setAt(0);
            }}
            onKeyDown={(e) => {
              if (e.key === "ArrowDown") setAt((n) => Math.min(hits.length - 1, n + 1));
              else if (e.key === "ArrowUp") setAt((n) => Math.max(0, n - 1));
              else if (e.key === "Enter") choose(hits[at]);
              else if (e.key === "Escape") close();
              else return;
              e.preventDefault();
            }}
          />
          <p className="search-status" data-testid="search-status" data-status={p.status} aria-live="polite">
            {statusLine(p)}
          </p>
          {reply?.errors.length ? <p className="search-errors">{reply.errors.join("; ")}</p> : null}
          {note ? <p className="search-errors">{note}</p> : null}
          <ul className="search-results" aria-label="Results" data-testid="search-results">
            {hits.map((h, n) => {
              const ex = excerpt(h);
              return (
                <li key={h.message.uri} className={n === at ? "chosen" : undefined}>
                  <button
                    type="button"
                    tabIndex={-1}
                    onClick={() => choose(h)}
                    aria-current={n === at || undefined}
                  >
                    <span className="search-where">
                      #{host().displaySafe(h.channelName ?? h.message.channelId)} ·{" "}
                      {host().displaySafe(host().handleWithoutSuffix(h.message.author.handle))} ·{" "}
                      <time dateTime={new Date(h.message.signedAt).toISOString()}>
                        {new Date(h.message.signedAt).toLocaleString()}
                      </time>
                      {h.message.verified ? null : <b className="bad"> unverified</b>}
                    </span>
                    <span className="search-text">
                      <Marked text={ex.text} ranges={ex.ranges} />
                      {h.edited ? <small> {SearchText.edited}</small> : null}
                    </span>
                  </button>
                </li>
              );
            })}
            {query.trim() && reply && hits.length === 0 ? (
              <li className="sb-empty">{SearchText.none}</li>
            ) : null}
            {!query.trim() ? <li className="sb-empty">{SearchText.empty}</li> : null}
          </ul>
          <p className="search-foot">
            <button type="button" className="search-off" onClick={() => void turnSearchOff()}>
              {SearchText.turnOff}
            </button>
          </p>
        </>
      )}
    </Modal>
  );
}

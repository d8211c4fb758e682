import { useState } from "react";
import { useSnapshot } from "valtio";
import { conversationTitle } from "../../../core/client/view/conversation-title.ts";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import { displaySafe } from "../../../core/slash-commands/display-safe.ts";
import { Modal } from "../../components/Modal.tsx";
import { selectChannel } from "../../state/channel.ts";
import { openConversation } from "../../state/direct.ts";
import { engineState } from "../../state/engine.ts";

/** A handle as one types it to write to someone (`bob`, `@bob`, `bob.example.org`). */
const HANDLE_RE = /^@?[a-z0-9][a-z0-9.-]{0,252}$/i;

interface Match {
  key: string;
  label: string;
  note: string | null;
  go: () => void;
}

/**
 * The Ctrl+K list (web/features/chat/board-keys.ts opens it); its code loads on first use. It finds
 * channels, conversations and people (issue 30): the people this user shares a channel or a
 * conversation with, and, for a handle typed in full, anyone by that handle (the server answers
 * whether they exist, as `/msg` does). Choosing a person opens the one conversation with them.
 */
export function QuickSwitcher({ onClose }: { onClose: () => void }) {
  const s = useSnapshot(engineState);
  const [query, setQuery] = useState("");
  const [at, setAt] = useState(0);
  const q = query.trim().toLowerCase().replace(/^[#@]/, "");
  const me = s.auth.user?.did ?? null;
  const open = (id: string) => () => void selectChannel(id);
  const write = (handle: string) => () => void openConversation(handle, null).catch(() => undefined);

  const channels: Match[] = [...s.channels]
    .filter((c) => c.value.name.toLowerCase().includes(q))
    .sort((a, b) => Number(b.isMember) - Number(a.isMember) || a.value.name.localeCompare(b.value.name))
    .map((c) => ({
      key: c.id,
      label: `#${displaySafe(c.value.name)}`,
      note: c.isMember ? null : "browse",
      go: open(c.id),
    }));
  const conversations: Match[] = [];
  const inPairs = new Set<string>();
  for (const c of s.conversations ?? []) {
    const title = conversationTitle(c, me, handleWithoutSuffix);
    const other = c.kind === "pair" ? c.members.find((m) => m.did !== me) : undefined;
    if (other) inPairs.add(other.did);
    const handles = c.members.map((m) => m.handle.toLowerCase());
    if (!title.toLowerCase().includes(q) && !handles.some((h) => h.includes(q))) continue;
    conversations.push({
      key: c.channel.id,
      label: displaySafe(title),
      note: c.request ? "request" : "direct",
      go: open(c.channel.id),
    });
  }
  // People seen in channels and conversations, without those already listed by their conversation.
  const people = new Map<string, string>();
  for (const v of Object.values(s.open)) for (const m of v.members) people.set(m.did, m.handle);
  for (const c of s.conversations ?? []) for (const m of c.members) people.set(m.did, m.handle);
  const persons: Match[] = [...people]
    .filter(([did, handle]) => did !== me && !inPairs.has(did) && handle.toLowerCase().includes(q))
    .sort((a, b) => a[1].localeCompare(b[1]))
    .map(([did, handle]) => ({
      key: did,
      label: `@${displaySafe(handleWithoutSuffix(handle))}`,
      note: "message",
      go: write(handle),
    }));
  const known = [...people.values()].some((h) => h.toLowerCase() === q || handleWithoutSuffix(h) === q);
  // Anyone else by their handle, typed in full (nobody is listed who was not seen: no directory).
  const typed: Match[] =
    q && HANDLE_RE.test(q) && !known && query.trim()[0] !== "#"
      ? [{ key: `@${q}`, label: `Message @${displaySafe(q)}`, note: null, go: write(q) }]
      : [];
  const matches = (query.trim().startsWith("@") ? [] : channels)
    .concat(conversations, persons, typed)
    .slice(0, 50);
  const choose = (m: Match | undefined) => {
    if (!m) return;
    onClose();
    m.go();
  };
  return (
    <Modal title="Switch channel" labelledBy="switcher-title" className="switcher" onEscape={onClose}>
      <input
        className="switcher-input"
        aria-label="Channel or person"
        placeholder="#channel or @person"
        autoComplete="off"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setAt(0);
        }}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown") setAt((n) => Math.min(matches.length - 1, n + 1));
          else if (e.key === "ArrowUp") setAt((n) => Math.max(0, n - 1));
          else if (e.key === "Enter") choose(matches[at]);
          else if (e.key === "Escape") onClose();
          else return;
          e.preventDefault();
        }}
      />
      <ul className="switcher-list" aria-label="Channels and people">
        {matches.map((m, n) => (
          <li key={m.key} className={n === at ? "chosen" : undefined}>
            <button
              type="button"
              tabIndex={-1}
              aria-current={n === at || undefined}
              onClick={() => choose(m)}
            >
              {m.label}
              {m.note ? <small> {m.note}</small> : null}
            </button>
          </li>
        ))}
        {matches.length === 0 ? <li className="sb-empty">Nothing matches</li> : null}
      </ul>
    </Modal>
  );
}

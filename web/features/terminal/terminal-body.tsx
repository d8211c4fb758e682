import type { ReactNode } from "react";
import { handleWithoutSuffix } from "../../../core/client/view/display.ts";
import type { Channel } from "../../../core/protocol/runtime.ts";
import {
  type Command,
  formatChannelList,
  type HighlightRange,
  helpLines,
  highlightSegments,
  interpretTerminalInput,
  joinCommandFor,
  noMatchesText,
  performSlash,
  searchChannels,
  type TerminalAction,
} from "../../../core/slash-commands/index.ts";
import { joinChannel, selectChannel } from "../../state/channel.ts";
import { createChannel } from "../../state/channel-actions.ts";
import { openConversation } from "../../state/direct.ts";
import { engineState } from "../../state/engine.ts";
import { openSearch } from "../search/SearchButton.tsx";

/**
 * The unlocked terminal's commands and views (spec §2.8, §2.12, §4.6), loaded when the terminal is
 * unlocked or a line is submitted: the puzzle in front of them needs none of core/slash-commands.
 */
export type View = "guide" | "channels" | "search";

export interface Entry {
  id: number;
  line: string;
  out: readonly string[];
}

/** What a command may do to the terminal around it. */
export interface TerminalHost {
  show(view: View): void;
  setQuery(query: string): void;
  print(line: string, out: readonly string[]): void;
  relock(): void;
}

export function interpret(unlocked: boolean, line: string): TerminalAction {
  return interpretTerminalInput({
    unlocked,
    // Signed in (the access token lives in the engine's memory, not in storage).
    hasToken: engineState.auth.isAuthenticated,
    line,
  });
}

/**
 * Carries out a slash command on the board: what it does is core/slash-commands/effects.ts's (the table the
 * CLI screen shares); here only how the terminal shows it (views for list and search, lines for the
 * rest, the lock for reset).
 */
export function runCommand(cmd: Command, line: string, host: TerminalHost): Promise<void> {
  return performSlash(cmd, {
    status: () => ({
      handle: handleWithoutSuffix(engineState.auth.user?.handle ?? ""),
      channelCount: engineState.channels.filter((c) => c.isMember).length,
      connected: engineState.connection === "connected",
    }),
    create: async (name, type) => {
      // Spec §5: create also needs the account's public key; without it the command does nothing.
      if (!engineState.auth.user?.publicKey) return null;
      const { channel, link } = await createChannel({ name, type });
      return { channelId: channel.id, name: channel.value.name, link: link ?? null };
    },
    join: (target) => joinChannel(target),
    message: (handle, text) => openConversation(handle, text),
    print: (out) => host.print(line, out),
    showChannels: async () => host.show("channels"),
    showSearch: async (query) => {
      host.setQuery(query);
      host.show("search");
    },
    findMessages: async (query) => openSearch(query),
    // A secret channel's link is shown here (opening the channel would replace this view).
    opened: (channelId, linkShown) => (linkShown ? undefined : selectChannel(channelId)),
    reset: () => host.relock(),
  });
}

function Marked({ text, ranges }: { text: string; ranges: readonly HighlightRange[] }) {
  return highlightSegments(text, ranges).map((s, i) =>
    // biome-ignore lint/suspicious/noArrayIndexKey: segments are positional and never reorder
    s.match ? <mark key={i}>{s.text}</mark> : s.text,
  );
}

export interface TerminalBodyProps {
  view: View;
  log: readonly Entry[];
  query: string;
  loading: boolean;
  channels: readonly Channel[];
  fill(command: string): void;
}

/** The unlocked terminal's body: the guide (help, then command output), the channel list or search. */
export function TerminalBody({ view, log, query, loading, channels, fill }: TerminalBodyProps): ReactNode {
  if (view === "guide")
    return log.length > 0 ? (
      log.map((e) => (
        <pre key={e.id} className="term-out">
          <b>$ {e.line}</b>
          {`\n${e.out.join("\n")}`}
        </pre>
      ))
    ) : (
      <pre className="term-out">{helpLines().join("\n")}</pre>
    );
  if (view === "channels") {
    const listing = formatChannelList(channels);
    return (
      <>
        <p className="term-head">{loading ? "LOADING CHANNELS..." : listing.header}</p>
        <ul className="term-list">
          {listing.lines.map((l) => (
            <li key={l.hash}>
              <button type="button" onClick={() => fill(l.joinCommand)} title={l.joinCommand}>
                <span className="term-name">{l.name}</span> <span className="term-type">[{l.type}]</span>{" "}
                <span className="term-hash">{l.hash}</span>
              </button>
            </li>
          ))}
        </ul>
      </>
    );
  }
  if (!query) return <pre className="term-out">{helpLines("search").join("\n")}</pre>;
  const matches = searchChannels(channels, query);
  if (matches.length === 0) return <p className="term-head">{noMatchesText(query)}</p>;
  return (
    <ul className="term-list">
      {matches.map(({ channel: c, highlights: h }) => (
        <li key={c.id}>
          <button type="button" onClick={() => fill(joinCommandFor(c.id))}>
            <span className="term-name">
              <Marked text={c.value.name} ranges={h.name} />
            </span>{" "}
            <span className="term-type">
              [<Marked text={c.value.type} ranges={h.type} />]
            </span>{" "}
            <span className="term-hash">
              <Marked text={c.id} ranges={h.hash} />
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}

import { type FormEvent, type ReactNode, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
import { handleWithoutSuffix } from "../../../core/client/display.ts";
import {
  type Command,
  formatChannelList,
  formatStatus,
  type HighlightRange,
  helpLines,
  highlightSegments,
  interpretTerminalInput,
  isUnlockedFlag,
  joinCommandFor,
  noMatchesText,
  PUZZLE_QUESTION,
  searchChannels,
  TERMINAL_UNLOCKED_KEY,
  TERMINAL_UNLOCKED_VALUE,
} from "../../../core/commands/index.ts";
import { createChannel, fetchChannels, joinChannel, selectChannel } from "../../state/channel.ts";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";

type View = "guide" | "channels" | "search";
const VIEWS: readonly View[] = ["guide", "channels", "search"];

/** Command outputs kept in the guide view's scrollback. */
const LOG_MAX = 50;

interface Entry {
  id: number;
  line: string;
  out: readonly string[];
}
let entryId = 0;

function Marked({ text, ranges }: { text: string; ranges: readonly HighlightRange[] }) {
  return highlightSegments(text, ranges).map((s, i) =>
    // biome-ignore lint/suspicious/noArrayIndexKey: segments are positional and never reorder
    s.match ? <mark key={i}>{s.text}</mark> : s.text,
  );
}

/**
 * The terminal command panel (spec §2.8, §2.12, §4.6): a puzzle until a secret phrase is given, then a
 * prompt for /wsync/ commands. Parsing and the lock rules are core/commands' (shared with the CLI);
 * this view only performs the commands, as cli/tui/commands.ts does, and shows their output.
 */
export function TerminalView() {
  const s = useSnapshot(engineState);
  // null until the stored flag is read: localStorage exists only in the browser, after hydration.
  const [unlocked, setUnlocked] = useState<boolean | null>(null);
  const [view, setView] = useState<View>("guide");
  const [log, setLog] = useState<Entry[]>([]);
  const [query, setQuery] = useState("");
  const [loading, setLoading] = useState(false);
  const [input, setInput] = useState("");
  const inputRef = useRef<HTMLInputElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);

  useEffect(() => setUnlocked(isUnlockedFlag(localStorage.getItem(TERMINAL_UNLOCKED_KEY))), []);
  // Focused on load (spec §2.12), and again when the puzzle gives way to the prompt or back.
  useEffect(() => {
    if (unlocked !== null) inputRef.current?.focus();
  }, [unlocked]);

  // Newest output in view, as in a terminal.
  useEffect(() => {
    const el = bodyRef.current;
    if (el && log.length > 0) el.scrollTop = el.scrollHeight;
  }, [log]);

  function show(next: View) {
    setView(next);
    if (next === "guide") return;
    // The channels view shows its loading flag until the list is back (spec §2.12).
    setLoading(true);
    fetchChannels()
      .catch(() => undefined)
      .finally(() => setLoading(false));
  }

  function print(line: string, out: readonly string[]) {
    setLog((l) => [...l, { id: ++entryId, line, out }].slice(-LOG_MAX));
    setView("guide");
  }

  function fill(command: string) {
    setInput(command);
    inputRef.current?.focus();
  }

  async function run(cmd: Command, line: string) {
    switch (cmd.name) {
      case "list":
        return show("channels");
      case "search":
        setQuery(cmd.query);
        return show("search");
      case "help":
        return print(line, helpLines(cmd.topic));
      case "status":
        return print(
          line,
          formatStatus({
            handle: handleWithoutSuffix(engineState.auth.user?.handle ?? ""),
            channelCount: engineState.channels.filter((c) => c.isMember).length,
            connected: engineState.connection === "connected",
          }),
        );
      case "reset":
        localStorage.removeItem(TERMINAL_UNLOCKED_KEY);
        setLog([]);
        setView("guide");
        return setUnlocked(false);
      case "create": {
        // Spec §5: create also needs the account's public key; without it the command does nothing.
        if (!engineState.auth.user?.publicKey) return;
        const { channel, link } = await createChannel({ name: cmd.channelName, type: cmd.channelType });
        // A secret channel's link is shown here (opening the channel would replace this view).
        if (link)
          return print(line, [
            `CHANNEL CREATED: ${link}`,
            "Share this link with people you want to invite to the channel",
          ]);
        return selectChannel(channel.id);
      }
      case "join":
        return joinChannel(cmd.joinToken ? `${cmd.channelId}#${cmd.joinToken}` : cmd.channelId);
    }
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const action = interpretTerminalInput({
      unlocked: unlocked === true,
      // Signed in (the access token lives in the engine's memory, not in storage).
      hasToken: engineState.auth.isAuthenticated,
      line: input,
    });
    if (action.kind === "unlock") {
      localStorage.setItem(TERMINAL_UNLOCKED_KEY, TERMINAL_UNLOCKED_VALUE);
      setInput("");
      setUnlocked(true);
    } else if (action.kind === "run") {
      setInput("");
      // The actions already toast their failure; the terminal itself stays silent (spec §8).
      run(action.command, input.trim()).catch((err) => console.warn("[wsync] command failed", err));
    }
    // Anything else (a wrong answer, plain text, no token, a bad command) does nothing at all.
  }

  const listing = formatChannelList(s.channels);
  const matches = searchChannels(s.channels, query);
  let body: ReactNode = null;
  if (unlocked === false) body = <p className="term-question">{PUZZLE_QUESTION}</p>;
  else if (unlocked && view === "guide")
    body =
      log.length > 0 ? (
        log.map((e) => (
          <pre key={e.id} className="term-out">
            <b>$ {e.line}</b>
            {`\n${e.out.join("\n")}`}
          </pre>
        ))
      ) : (
        <pre className="term-out">{helpLines().join("\n")}</pre>
      );
  else if (unlocked && view === "channels")
    body = (
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
  else if (unlocked)
    body = !query ? (
      <pre className="term-out">{helpLines("search").join("\n")}</pre>
    ) : matches.length === 0 ? (
      <p className="term-head">{noMatchesText(query)}</p>
    ) : (
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

  return (
    <section className="terminal" aria-label="Terminal">
      <header className="term-bar">
        <span className="term-title">WSYNC://TERMINAL</span>
        {unlocked ? (
          <div className="term-tabs" role="tablist">
            {VIEWS.map((v) => (
              <button key={v} type="button" role="tab" aria-selected={view === v} onClick={() => show(v)}>
                {v}
              </button>
            ))}
          </div>
        ) : null}
        <button type="button" className="term-net" onClick={() => (uiState.networkView = "network")}>
          network
        </button>
      </header>
      <div className="term-body" ref={bodyRef} aria-live="polite">
        {body}
      </div>
      {unlocked === null ? null : (
        <form className="term-prompt" onSubmit={submit}>
          <span aria-hidden="true">{unlocked ? "$" : "?"}</span>
          <input
            ref={inputRef}
            value={input}
            onChange={(e) => setInput(e.target.value)}
            aria-label={unlocked ? "Command" : "Answer"}
            placeholder={unlocked ? "/wsync/help" : "answer"}
            autoComplete="off"
            autoCapitalize="off"
            spellCheck={false}
          />
        </form>
      )}
    </section>
  );
}

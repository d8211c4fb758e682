import { type FormEvent, useEffect, useRef, useState } from "react";
import { useSnapshot } from "valtio";
// Only the lock: the commands and their views load with the unlocked terminal (terminal-body.tsx).
import {
  isUnlockedFlag,
  PUZZLE_QUESTION,
  TERMINAL_UNLOCKED_KEY,
  TERMINAL_UNLOCKED_VALUE,
} from "../../../core/slash-commands/lock.ts";
import { lazyPart } from "../../components/lazy-part.tsx";
import { fetchChannels } from "../../state/channel.ts";
import { engineState } from "../../state/engine.ts";
import { uiState } from "../../state/ui.ts";
import type { Entry, TerminalHost, View } from "./terminal-body.tsx";

const VIEWS: readonly View[] = ["guide", "channels", "search"];

/** Command outputs kept in the guide view's scrollback. */
const LOG_MAX = 50;

let entryId = 0;

const loadCommands = () => import("./terminal-body.tsx");
const TerminalBody = lazyPart(() => loadCommands().then((m) => m.TerminalBody), "the terminal");

/**
 * The terminal command panel (spec §2.8, §2.12, §4.6): a puzzle until a secret phrase is given, then a
 * prompt for /wsync/ commands. Parsing and the lock rules are core/slash-commands' (shared with the CLI);
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

  function fill(command: string) {
    setInput(command);
    inputRef.current?.focus();
  }

  const host: TerminalHost = {
    show,
    setQuery,
    print(line, out) {
      setLog((l) => [...l, { id: ++entryId, line, out }].slice(-LOG_MAX));
      setView("guide");
    },
    relock() {
      localStorage.removeItem(TERMINAL_UNLOCKED_KEY);
      setLog([]);
      setView("guide");
      setUnlocked(false);
    },
  };

  function submit(e: FormEvent) {
    e.preventDefault();
    const line = input;
    const wasUnlocked = unlocked === true;
    loadCommands()
      .then(async (m) => {
        const action = m.interpret(wasUnlocked, line);
        if (action.kind === "unlock") {
          localStorage.setItem(TERMINAL_UNLOCKED_KEY, TERMINAL_UNLOCKED_VALUE);
          setInput("");
          setUnlocked(true);
        } else if (action.kind === "run") {
          setInput("");
          // The actions already toast their failure; the terminal itself stays silent (spec §8).
          await m.runCommand(action.command, line.trim(), host);
        }
        // Anything else (a wrong answer, plain text, no token, a bad command) does nothing at all.
      })
      .catch((err) => console.warn("[wsync] command failed", err));
  }

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
        {unlocked === false ? <p className="term-question">{PUZZLE_QUESTION}</p> : null}
        {unlocked ? (
          <TerminalBody
            view={view}
            log={log}
            query={query}
            loading={loading}
            channels={s.channels}
            fill={fill}
          />
        ) : null}
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

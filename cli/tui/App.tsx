import { statSync } from "node:fs";
import { Box, Text, useApp, useInput, useStdout } from "ink";
import Spinner from "ink-spinner";
import { useEffect, useRef, useState } from "react";
import { handleWithoutSuffix, type TimelineItem, type WsyncClient } from "../../core/client/index.ts";
import { displaySafe, helpLines, parseCommandLine } from "../../core/slash-commands/index.ts";
import { ConnectionText, followConnection } from "../connection-notes.ts";
import { itemLine, removedText, sendBlockedText } from "../format.ts";
import { sessionEndedText } from "../session-end.ts";
import { ChannelList } from "./ChannelList.tsx";
import { InputLine } from "./InputLine.tsx";
import {
  type Completions,
  cleanInput,
  completions,
  highlights,
  InputHistory,
  newestSeq,
  type Unread,
  unreadOf,
} from "./input-aids.ts";
import { MembersPane } from "./MembersPane.tsx";
import { MessagePane, type Note, type OutputLine, paneLines, scrollRoom } from "./MessagePane.tsx";
import { type IrcResult, parseIrc, performIrc, SCREEN_HELP } from "./screen-commands.ts";
import type { ScreenLogs } from "./screen-log.ts";
import { perform } from "./slash-host.ts";
import { useClientState } from "./use-client-state.ts";
import { screenWindows } from "./windows.ts";

type Pane = "channels" | "messages" | "members" | "input";
const PANES: Pane[] = ["channels", "messages", "members", "input"];

/** The status window keeps this many lines (irssi's scrollback is bounded too). */
const STATUS_LINES = 2000;

export const ScreenText = {
  welcome: "Window 1 is this status window; Alt+2… (or /window N) your channels. /help for commands.",
  sessionEnded:
    "Your session ended (signed out, or ended from another device). Sign in again from another terminal (`wsync login`): this screen picks the new session up.",
  signedInAgain: (handle: string) => `Signed in again as ${handle}; reconnected.`,
  noWindow: (n: number, count: number) => `No window ${n} (1 is the status window, 2–${count} your channels)`,
} as const;

function useTerminalSize(): { rows: number; columns: number } {
  const { stdout: raw } = useStdout();
  // A TTY stream in a terminal; ink-testing-library's fake has neither field (defaults apply).
  const stdout = raw as typeof raw & { rows?: number; columns?: number };
  const [size, setSize] = useState({ rows: stdout.rows || 24, columns: stdout.columns || 80 });
  useEffect(() => {
    const onResize = () => setSize({ rows: stdout.rows || 24, columns: stdout.columns || 80 });
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
  }, [stdout]);
  return size;
}

export interface AppProps {
  client: WsyncClient;
  /** The device's session file: watched after the session ends, to pick up a sign-in from elsewhere. */
  sessionFile?: string | undefined;
  /** Opt-in logs of what the screen shows (`/log on`). */
  logs?: ScreenLogs | undefined;
  /** The terminal bell (a highlight, a Tab with nothing to complete). */
  bell?: (() => void) | undefined;
}

/**
 * The interactive screen, as irssi users expect it: window 1 is the status window (command output,
 * notices), windows 2… the channels you are in; a channel list and members beside; an input line and
 * a status bar.
 */
export function App({ client, sessionFile, logs, bell: bellProp }: AppProps) {
  const state = useClientState(client);
  const { exit } = useApp();
  const { stdout } = useStdout();
  const bell = bellProp ?? (() => stdout.write("\u0007"));
  const { rows, columns } = useTerminalSize();
  const [focus, setFocus] = useState<Pane>("input");
  const [selected, setSelected] = useState(0);
  const [input, setInput] = useState("");
  const [output, setOutput] = useState<OutputLine[]>([ScreenText.welcome]);
  const [notes, setNotes] = useState<Record<string, Note[]>>({});
  const [status, setStatus] = useState<{ text: string; error: boolean }>({ text: "", error: false });
  // The connection dropped and is not back: the status bar says so for as long as it lasts, whatever
  // else set its text meanwhile (a channel that finished opening wrote over the notice).
  const [down, setDown] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [scroll, setScroll] = useState(0);
  // Setting the text from outside (history, completion) moves the cursor to the end.
  const [inputGen, setInputGen] = useState(0);
  const setInputText = (v: string) => {
    setInput(v);
    setInputGen((g) => g + 1);
  };
  const history = useRef(new InputHistory());
  // A multi-line paste waits for a second Enter (paste guard): its line count, or null.
  const [pasted, setPasted] = useState<number | null>(null);
  const [, rerender] = useState(0);
  const [logging, setLogging] = useState(false);
  // Tab cycling: the matches of the word being completed, which one is in, and the line it made.
  const cycle = useRef<{ c: Completions; n: number; value: string } | null>(null);

  const current = state.currentChannelId ? (state.open[state.currentChannelId] ?? null) : null;
  const me = state.auth.user;
  const joined = state.channels.filter((c) => c.isMember);
  // The windows after (status): the channels, then the conversations (query windows).
  const windows = screenWindows(state);
  const joinedKey = windows.map((w) => w.id).join(",");
  const currentId = current?.channel.id ?? null;
  const hit = me ? (text: string) => highlights(text, me.handle) : undefined;

  /** Lines in the status window; `here` also in the open channel's window, after its newest record. */
  const print = (lines: readonly string[], color = "green", here = true) => {
    setOutput((o) => [...o, ...lines.map((text) => ({ text, color }))].slice(-STATUS_LINES));
    logs?.write(null, lines);
    const id = client.state.currentChannelId;
    if (here && id) {
      const after = newestSeq(client.view(id));
      setNotes((n) => ({ ...n, [id]: [...(n[id] ?? []), ...lines.map((text) => ({ after, text, color }))] }));
    }
  };

  /** Tab in the input: the first match, then the next on each Tab; a bell when there is none. */
  const completeInput = (value: string): string | null => {
    let next: { c: Completions; n: number; value: string } | null = null;
    const was = cycle.current;
    if (was && was.value === value && was.c.choices.length > 1) next = { ...was, n: was.n + 1 };
    else {
      const c = completions(value, {
        channels: joined.map((ch) => ch.value.name),
        handles: (current?.members ?? []).map((m) => m.handle),
      });
      if (c) next = { c, n: 0, value: "" };
    }
    if (!next) {
      bell();
      return null;
    }
    next.value = next.c.value(next.n);
    cycle.current = next;
    setInputText(next.value);
    if (next.c.choices.length > 1) {
      const at = next.n % next.c.choices.length;
      setStatus({
        text: next.c.choices.map((ch, k) => (k === at ? `[${ch}]` : ch)).join("  "),
        error: false,
      });
    }
    return next.value;
  };

  /** Typed text: a chunk may end in a line break (Enter came with it) or a Tab. */
  const onInputChange = (v: string) => {
    // Keys arrive in chunks: on a slow link (or a loaded machine) the last letters and Enter come as
    // one chunk. A chunk that ends in a line break is text and Enter: submit. Line breaks inside are
    // a paste: it stays in the field and the paste guard asks.
    const { text, edited } = cleanInput(v);
    if (text.endsWith("\n")) {
      const typed = text.slice(0, -1);
      if (typed.includes("\n")) {
        setInputText(typed);
        void submit(typed, true);
      } else void submit(typed);
      return;
    }
    // Letters and Tab in one chunk are typing and Tab (complete, else a bell; focus stays), and so
    // are letters typed right after a Tab.
    const tab = text.indexOf("\t");
    if (tab >= 0) {
      const typed = text.slice(0, tab);
      const done = completeInput(typed) ?? typed;
      setInputText(done + text.slice(tab + 1).replace(/\t/g, ""));
      return;
    }
    setPasted(null);
    (edited ? setInputText : setInput)(text.replace(/\n+$/, ""));
  };
  const onPaste = (v: string) => {
    setPasted(null);
    setInput(v);
  };

  // Unread counts: every joined channel is opened in the background (subscribed, last page loaded), and
  // what arrives after that while the channel is not the current one is unread. `seen` is the newest
  // seq read per channel; `marker` where the "new messages" line goes in the current channel.
  const [seen, setSeen] = useState<Record<string, number>>({});
  const [marker, setMarker] = useState<Record<string, number>>({});
  // biome-ignore lint/correctness/useExhaustiveDependencies: joinedKey stands for the windows.
  useEffect(() => {
    let stop = false;
    void (async () => {
      for (const c of windows) {
        if (stop) return;
        if (seen[c.id] !== undefined) continue;
        try {
          const view = client.view(c.id) ?? (await client.open(c.id, { focus: false }));
          const newest = newestSeq(view);
          setSeen((s) => (s[c.id] === undefined ? { ...s, [c.id]: newest } : s));
        } catch {
          // A channel that cannot be loaded now shows no count; opening it says why.
        }
      }
    })();
    return () => {
      stop = true;
    };
  }, [client, joinedKey]);
  const currentNewest = newestSeq(current ?? undefined);
  useEffect(() => {
    if (currentId)
      setSeen((s) => (s[currentId] === currentNewest ? s : { ...s, [currentId]: currentNewest }));
  }, [currentId, currentNewest]);
  const unread: Record<string, Unread> = {};
  if (me)
    for (const c of windows)
      if (c.id !== currentId && seen[c.id] !== undefined)
        unread[c.id] = unreadOf(client.view(c.id), seen[c.id] as number, me, highlights);
  const offline = down && state.connection !== "connected";
  const totalUnread = Object.values(unread).reduce((n, u) => n + u.count, 0);
  const totalMentions = Object.values(unread).reduce((n, u) => n + u.mentions, 0);

  /** Makes a channel the current one; the "new messages" line goes after what was read in it. */
  const switchTo = (id: string) => {
    const view = client.view(id);
    setMarker((m) => ({ ...m, [id]: seen[id] ?? newestSeq(view) }));
    setScroll(0);
    if (view) {
      client.state.currentChannelId = id;
      rerender((n) => n + 1);
      setStatus({ text: `#${view.channel.value.name}`, error: false });
    } else void openChannel(id);
  };

  /** irssi's windows: 1 the status window, 2… the channels you are in, in the list's order, then queries. */
  const windowCount = windows.length + 1;
  const currentWindow = currentId ? windows.findIndex((c) => c.id === currentId) + 2 : 1;
  const goWindow = (n: number) => {
    if (n === 1) {
      client.state.currentChannelId = null;
      setScroll(0);
      rerender((k) => k + 1);
      setStatus({ text: "(status)", error: false });
      return;
    }
    const target = windows[n - 2];
    if (target) switchTo(target.id);
    else setStatus({ text: ScreenText.noWindow(n, windowCount), error: true });
  };

  // Side panes give way on narrow terminals: the members below 100 columns, the channels below 60.
  // Tab never stops on a pane that is not shown.
  const side = Math.min(32, Math.max(24, Math.floor(columns / 4.5)));
  const showChannels = columns >= 60;
  const showMembers = current !== null && columns >= 100;
  const visiblePanes = PANES.filter(
    (p) => (p !== "channels" || showChannels) && (p !== "members" || showMembers),
  );
  const paneHeight = Math.max(6, rows - 4);
  const paneWidth = columns - (showChannels ? side : 0) - (showMembers ? side : 0);
  const currentNotes = currentId ? notes[currentId] : undefined;
  // Inside the border (2) and the padding (2).
  const laid = paneLines(
    current,
    output,
    Math.max(4, paneWidth - 4),
    currentId ? marker[currentId] : undefined,
    me?.did,
    currentNotes,
    hit,
  );
  const room = scrollRoom(paneHeight, laid.pinned.length);

  // biome-ignore lint/correctness/useExhaustiveDependencies: print and bell only close over setters.
  useEffect(() => {
    void logs?.load().then(setLogging);
    const offs = [
      client.events.on("error", ({ message }) => setStatus({ text: message, error: true })),
      client.events.on("key-changed", ({ handle }) => {
        const text = `${displaySafe(handle)}'s key changed: compare with \`wsync verify ${displaySafe(handle)}\``;
        setStatus({ text, error: true });
        print([text], "yellow", false);
      }),
      client.events.on("security-warning", (w) => {
        // Other channels' warnings too: the status window keeps them all.
        const name = client.view(w.channelId)?.channel.value.name;
        const text = displaySafe(`${name ? `#${name}: ` : ""}${w.text}`);
        setStatus({ text, error: true });
        print([text], "red", false);
      }),
      // Kicked, or left from another process: said in the status window (the channel's window is gone).
      client.events.on("removed", (r) => {
        const name = `#${displaySafe(r.name ?? r.channelId)}`;
        const by = r.by ? ` by ${displaySafe(handleWithoutSuffix(r.by.handle))}` : "";
        const text =
          r.reason === "kicked" ? `You were removed from ${name}${by} (kicked)` : removedText(r.reason, name);
        setStatus({ text, error: true });
        print([text], "red", false);
        if (r.reason === "kicked") bell();
      }),
      client.events.on("invited", ({ channel, from }) =>
        print(
          [
            `${displaySafe(from.handle)} invited you to #${displaySafe(channel.value.name)}: /join ${channel.id}`,
          ],
          "cyan",
          false,
        ),
      ),
      // irssi's hilight: a message that names you (bare handle or @handle) rings the bell.
      client.events.on("item", ({ channelId, item }) => logItem(channelId, item)),
    ];
    const stopNotes = followConnection(client, {
      lost: () => {
        setDown(true);
        setStatus({ text: ConnectionText.lost, error: true });
        print([ConnectionText.lost], "yellow");
      },
      back: (n, c) => {
        setDown(false);
        setStatus({ text: ConnectionText.back(n, c), error: false });
        print([ConnectionText.back(n, c)], "cyan");
      },
    });
    return () => {
      for (const off of offs) off();
      stopNotes();
    };
  }, [client]);

  const logItem = (channelId: string, item: TimelineItem) => {
    if (item.sending) return;
    const user = client.state.auth.user;
    const view = client.view(channelId);
    if (view) logs?.write({ id: channelId, name: view.channel.value.name }, [itemLine(item)]);
    if (
      user &&
      item.kind === "message" &&
      item.author.did !== user.did &&
      !item.deleted &&
      item.text &&
      highlights(item.text, user.handle)
    ) {
      bell();
      if (channelId !== client.state.currentChannelId && view)
        setStatus({
          text: `${displaySafe(handleWithoutSuffix(item.author.handle))} named you in #${displaySafe(view.channel.value.name)}`,
          error: false,
        });
    }
  };

  // The session ended: say so, then wait for a sign-in from another process (the session file
  // changes) and pick it up: restore, reconnect, reload the channels.
  // biome-ignore lint/correctness/useExhaustiveDependencies: print only closes over setters.
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | null = null;
    const off = client.events.on("session-ended", ({ reason }) => {
      // Disabled by the operator or deleted: said as such (signing in again will not help).
      const text = reason ? sessionEndedText(reason).replace(/^wsync: /, "") : ScreenText.sessionEnded;
      setStatus({ text, error: true });
      print([text], "red", false);
      bell();
      if (!sessionFile || timer) return;
      const version = () => {
        try {
          const st = statSync(sessionFile);
          return `${st.ino}:${st.size}:${st.mtimeMs}`;
        } catch {
          return "";
        }
      };
      let last = version();
      let trying = false;
      timer = setInterval(() => {
        const now = version();
        if (now === last || trying) return;
        last = now;
        trying = true;
        void client
          .restore()
          .then(async (ok) => {
            if (!ok || !timer) return;
            clearInterval(timer);
            timer = null;
            client.connect();
            await client.refreshChannels().catch(() => undefined);
            setSeen({});
            const handle = client.state.auth.user?.handle ?? "";
            setStatus({ text: ScreenText.signedInAgain(handle), error: false });
            print([ScreenText.signedInAgain(handle)], "cyan", false);
          })
          .catch(() => undefined)
          .finally(() => {
            trying = false;
          });
      }, 500);
    });
    return () => {
      off();
      if (timer) clearInterval(timer);
    };
  }, [client, sessionFile]);

  async function task(label: string, fn: () => Promise<void>): Promise<void> {
    setBusy(label);
    setStatus({ text: "", error: false });
    try {
      await fn();
    } catch (e) {
      setStatus({ text: e instanceof Error ? e.message : String(e), error: true });
    } finally {
      setBusy(null);
    }
  }

  const openChannel = (id: string) =>
    task("Loading history", async () => {
      await client.open(id);
      setScroll(0);
      // Named in the status line unless something was said there while it loaded (task cleared it):
      // a paste guard, an error, another window. That is newer, and stays.
      const named = { text: `#${client.view(id)?.channel.value.name ?? id}`, error: false };
      setStatus((said) => (said.text === "" ? named : said));
    });

  /** /last: the lines of this window that contain the text, printed in it (irssi's /lastlog). */
  const lastlog = (text: string) => {
    const needle = text.toLowerCase();
    const all = paneLines(current, output, 10_000, undefined, me?.did, currentNotes).lines.map((l) =>
      l.map((s) => s.text).join(""),
    );
    const found = all.filter((l) => l.toLowerCase().includes(needle) && !l.startsWith("-!- /last"));
    print([`/last ${text}: ${found.length} line${found.length === 1 ? "" : "s"}`, ...found], "cyan");
    setScroll(0);
  };

  const applyIrc = async (r: IrcResult) => {
    if (r.quit) {
      setBusy(null);
      exit();
      return;
    }
    if (r.help) print([...helpLines(null, "cli"), "", ...SCREEN_HELP]);
    if (r.window !== undefined) goWindow(r.window);
    if (r.last !== undefined) lastlog(r.last);
    if (r.log !== undefined && logs) {
      if (r.log !== null) {
        await logs.setEnabled(r.log);
        setLogging(r.log);
      }
      print([
        logs.enabled
          ? `Logs are on: what this screen shows is appended to ${logs.dir} (files 0600; plaintext on this disk)`
          : "Logs are off (/log on keeps what this screen shows on disk)",
      ]);
    }
    if (r.output) print(r.output);
    if (r.openChannelId) {
      setScroll(0);
      setMarker((m) => ({
        ...m,
        [r.openChannelId as string]: newestSeq(client.view(r.openChannelId as string)),
      }));
    }
    if (r.status) setStatus({ text: r.status, error: false });
  };

  /** Enter on the input line; `newPaste`: the text just changed, so a multi-line one is asked about again. */
  async function submit(line: string, newPaste = false): Promise<void> {
    const text = line.trim();
    cycle.current = null;
    if (!text) {
      setInput("");
      return;
    }
    // Paste guard: a multi-line paste is sent only after a second Enter (Ctrl+U drops it).
    const lineCount = text.split(/\r?\n/).length;
    if (lineCount > 1 && (pasted === null || newPaste) && !text.startsWith("/")) {
      setPasted(lineCount);
      setStatus({
        text: `${lineCount} lines pasted: Enter sends them as one message, Ctrl+U clears`,
        error: true,
      });
      return;
    }
    setPasted(null);
    setInput("");
    history.current.add(text);
    const irc = text.startsWith("/") && !text.startsWith("/wsync/") ? parseIrc(text) : null;
    if (irc) {
      if ("error" in irc) {
        setStatus({ text: irc.error, error: true });
        return;
      }
      if (irc.name === "quit") {
        // Straight out: no progress line is drawn on the way (it would stay behind on exit).
        exit();
        return;
      }
      await task(irc.name === "join" ? "Joining" : "Working", async () => {
        await applyIrc(await performIrc(client, irc, client.state.currentChannelId));
      });
      return;
    }
    if (text.startsWith("/")) {
      const parsed = parseCommandLine(text);
      if ("error" in parsed) {
        setStatus({ text: parsed.message, error: true });
        return;
      }
      await task(
        parsed.name === "create" ? "Creating channel" : parsed.name === "join" ? "Joining" : "Working",
        async () => {
          const r = await perform(client, parsed);
          if (r.clear) {
            setOutput([]);
            const id = client.state.currentChannelId;
            if (id) setNotes((n) => ({ ...n, [id]: [] }));
          }
          if (r.output) print(r.output);
          if (r.openChannelId) setScroll(0);
          if (r.status) setStatus({ text: r.status, error: false });
        },
      );
      return;
    }
    const channelId = client.state.currentChannelId;
    if (!channelId) {
      setStatus({
        text: "This is the status window: open a channel first (Alt+2, /window 2, or /join #name)",
        error: true,
      });
      return;
    }
    const view = client.view(channelId);
    // Say why at once instead of letting the engine refuse after a round trip.
    if (view?.sendBlocked) {
      setStatus({ text: sendBlockedText(view), error: true });
      return;
    }
    await task("Sending", async () => {
      await client.send(channelId, text);
      setScroll(0);
    });
  }

  /** Scrolls the message pane (by terminal lines, over the layout it draws); false for other keys. */
  const scrollKey = (key: Parameters<Parameters<typeof useInput>[0]>[1], lineKeys: boolean): boolean => {
    const page = Math.max(1, room - 1);
    const top = Math.max(0, laid.lines.length - room);
    let next = scroll;
    if (lineKeys && key.upArrow) next = scroll + 1;
    else if (key.pageUp) next = scroll + page;
    else if (lineKeys && key.home) next = top;
    else if (lineKeys && key.downArrow) next = scroll - 1;
    else if (key.pageDown) next = scroll - page;
    else if (lineKeys && key.end) next = 0;
    else return false;
    next = Math.max(0, Math.min(next, top));
    setScroll(next);
    // At the top of what is loaded: fetch older records (spec §4.5 LOAD_MORE_DATA).
    if (
      current &&
      next >= top &&
      (key.upArrow || key.pageUp || key.home) &&
      current.hasMore &&
      !current.loadingMore
    )
      void task("Loading older messages", () => client.loadMore(current.channel.id));
    return true;
  };

  useInput((ch, key) => {
    if (key.escape) {
      exit();
      return;
    }
    // Alt+1…9, Alt+0: windows 1…10; Ctrl+N / Ctrl+P: the next / previous window (from any pane).
    // The input line never takes these keys as text.
    if (key.meta && /^[0-9]$/.test(ch)) {
      goWindow(ch === "0" ? 10 : Number(ch));
      return;
    }
    if (key.ctrl && (ch === "n" || ch === "p")) {
      const step = ch === "n" ? 1 : windowCount - 1;
      goWindow(((currentWindow - 1 + step) % windowCount) + 1);
      return;
    }
    if (key.tab) {
      // In the input Tab completes (each Tab the next match) or rings the bell; it never moves
      // focus. Shift+Tab leaves the input for the panes.
      if (focus === "input" && !key.shift) {
        completeInput(input);
        return;
      }
      cycle.current = null;
      if (focus === "input") {
        setFocus(visiblePanes[0] as Pane);
        return;
      }
      const i = Math.max(0, visiblePanes.indexOf(focus));
      const n = visiblePanes.length;
      setFocus(visiblePanes[(i + (key.shift ? n - 1 : 1)) % n] as Pane);
      return;
    }
    if (focus === "input") {
      // Spec §5: Ctrl+U (or Cmd+U) clears the input.
      if (key.ctrl && ch === "u") {
        setInput("");
        setPasted(null);
        return;
      }
      // PgUp / PgDn scroll the window from the input line, as in irssi.
      if (scrollKey(key, false)) return;
      // Input history: ↑ the previous line sent, ↓ back towards what was being typed.
      if (key.upArrow) {
        const prev = history.current.up(input);
        if (prev !== null) setInputText(prev);
      }
      if (key.downArrow) {
        const next = history.current.down();
        if (next !== null) setInputText(next);
      }
      return;
    }
    if (focus === "channels") {
      if (key.upArrow) setSelected((s) => Math.max(0, s - 1));
      if (key.downArrow) setSelected((s) => Math.min(state.channels.length - 1, s + 1));
      if (key.return) {
        const c = state.channels[selected];
        if (c) switchTo(c.id);
      }
      return;
    }
    if (focus === "messages") scrollKey(key, true);
  });

  const user = state.auth.user;
  // Inside the input box: border (2), padding (2) and the prompt (2).
  const inputWidth = Math.max(4, columns - 6);
  return (
    <Box flexDirection="column" width={columns} height={rows}>
      <Box height={paneHeight}>
        {showChannels ? (
          <ChannelList
            channels={state.channels}
            selected={selected}
            activeId={state.currentChannelId}
            focused={focus === "channels"}
            unread={unread}
            direct={windows.filter((w) => w.direct)}
            width={side}
          />
        ) : null}
        <MessagePane
          view={current}
          output={output}
          notes={currentNotes}
          highlight={hit}
          focused={focus === "messages"}
          height={paneHeight}
          width={Math.max(4, paneWidth - 4)}
          scroll={scroll}
          newSince={currentId ? marker[currentId] : undefined}
          meDid={me?.did}
          window={currentWindow}
          name={currentId ? windows.find((w) => w.id === currentId && w.direct)?.label : undefined}
        />
        {showMembers && current ? (
          <MembersPane members={current.members} focused={focus === "members"} width={side} />
        ) : null}
      </Box>
      <Box borderStyle="single" borderColor={focus === "input" ? "green" : "gray"} paddingX={1} height={3}>
        <Text color="green">{"> "}</Text>
        <InputLine
          value={input}
          generation={inputGen}
          focus={focus === "input"}
          width={inputWidth}
          placeholder={currentId ? "message, or /help" : "/help, /window 2, /join #name"}
          onChange={onInputChange}
          onPaste={onPaste}
          onSubmit={(v) => void submit(v)}
        />
      </Box>
      <Box paddingX={1} justifyContent="space-between" height={1}>
        <Box flexShrink={1} flexGrow={1}>
          <Text color={status.error || offline ? "red" : "gray"} wrap="truncate">
            {busy ? (
              <Text color="cyan">
                <Spinner type="dots" /> {busy}…{" "}
              </Text>
            ) : null}
            {offline ? ConnectionText.lost : status.text}
          </Text>
        </Box>
        <Box flexShrink={0}>
          <Text color={state.connection === "connected" ? "green" : "red"}>
            {totalUnread ? `${totalUnread} unread${totalMentions ? `, ${totalMentions} @` : ""} · ` : ""}
            {logging ? "log · " : ""}
            {user ? handleWithoutSuffix(user.handle) : ""} ·{" "}
            {state.connection === "connected" ? "CONNECTED" : "DISCONNECTED"}
          </Text>
        </Box>
      </Box>
    </Box>
  );
}

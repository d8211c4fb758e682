import { Box, Text, useApp, useInput, useStdout } from "ink";
import Spinner from "ink-spinner";
import TextInput from "ink-text-input";
import { useEffect, useRef, useState } from "react";
import { handleWithoutSuffix, type WsyncClient } from "../../core/client/index.ts";
import { displaySafe, parseCommandLine } from "../../core/slash-commands/index.ts";
import { sendBlockedText } from "../format.ts";
import { ChannelList } from "./ChannelList.tsx";
import { cleanInput, complete, InputHistory, newestSeq, type Unread, unreadOf } from "./input-aids.ts";
import { MembersPane } from "./MembersPane.tsx";
import { MessagePane, paneLines, scrollRoom } from "./MessagePane.tsx";
import { parseIrc, performIrc } from "./screen-commands.ts";
import { perform } from "./slash-host.ts";
import { useClientState } from "./use-client-state.ts";

type Pane = "channels" | "messages" | "members" | "input";
const PANES: Pane[] = ["channels", "messages", "members", "input"];

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

/** The interactive screen: channels, messages, members, an input line and a status line. */
export function App({ client }: { client: WsyncClient }) {
  const state = useClientState(client);
  const { exit } = useApp();
  const { rows, columns } = useTerminalSize();
  const [focus, setFocus] = useState<Pane>("input");
  const [selected, setSelected] = useState(0);
  const [input, setInput] = useState("");
  const [output, setOutput] = useState<string[]>(["Type /wsync/help for commands; Tab moves between panes."]);
  const [status, setStatus] = useState<{ text: string; error: boolean }>({ text: "", error: false });
  const [busy, setBusy] = useState<string | null>(null);
  const [scroll, setScroll] = useState(0);
  // Ctrl+U, Ctrl+N/P and Alt+digit reach the text field too, which would insert their letter:
  // swallow that one change.
  const swallow = useRef(false);
  const onInputChange = (v: string) => {
    if (swallow.current) return;
    // Keys arrive in chunks: on a slow link (or a loaded machine) the last letters and Enter come as
    // one chunk, which the text field inserts as text. A chunk that ends in a line break is text and
    // Enter: submit. Line breaks inside are a paste: it stays in the field and the paste guard asks
    // (again, since this is new text), so an Enter that came with a paste is never lost nor sends it.
    const { text, edited } = cleanInput(v);
    if (text.endsWith("\n")) {
      const typed = text.slice(0, -1);
      if (typed.includes("\n")) {
        setInputText(typed);
        void submit(typed, true);
      } else void submit(typed);
      return;
    }
    // The same for Tab: letters and Tab in one chunk are typing and Tab (complete, else move on).
    if (text.endsWith("\t") && !text.slice(0, -1).includes("\t")) {
      const typed = text.slice(0, -1);
      if (!completeInput(typed)) {
        setInputText(typed);
        setFocus(PANES[(PANES.indexOf("input") + 1) % PANES.length] as Pane);
      }
      return;
    }
    setPasted(null);
    // An edited value is set from outside (the field's cursor goes to the end of it).
    (edited ? setInputText : setInput)(text.replace(/\n+$/, ""));
  };
  const swallowNext = () => {
    swallow.current = true;
    queueMicrotask(() => {
      swallow.current = false;
    });
  };
  // Setting the text from outside (history, completion) remounts the field, so its cursor goes to the end.
  const [inputGen, setInputGen] = useState(0);
  const setInputText = (v: string) => {
    setInput(v);
    setInputGen((g) => g + 1);
  };
  const history = useRef(new InputHistory());
  // A multi-line paste waits for a second Enter (paste guard): its line count, or null.
  const [pasted, setPasted] = useState<number | null>(null);
  const [, rerender] = useState(0);

  const current = state.currentChannelId ? (state.open[state.currentChannelId] ?? null) : null;
  const me = state.auth.user;
  const joined = state.channels.filter((c) => c.isMember);
  const joinedKey = joined.map((c) => c.id).join(",");
  /** Tab in the input: completes a #channel or a handle when the last word is one (false: nothing to do). */
  const completeInput = (value: string): boolean => {
    const done = complete(value, {
      channels: joined.map((c) => c.value.name),
      handles: (current?.members ?? []).map((m) => m.handle),
    });
    if (!done) return false;
    setInputText(done.value);
    if (done.choices.length > 1) setStatus({ text: done.choices.join("  "), error: false });
    return true;
  };

  // Unread counts: every joined channel is opened in the background (subscribed, last page loaded), and
  // what arrives after that while the channel is not the current one is unread. `seen` is the newest
  // seq read per channel; `marker` where the "new messages" line goes in the current channel.
  const [seen, setSeen] = useState<Record<string, number>>({});
  const [marker, setMarker] = useState<Record<string, number>>({});
  // biome-ignore lint/correctness/useExhaustiveDependencies: joinedKey stands for the joined list.
  useEffect(() => {
    let stop = false;
    void (async () => {
      for (const c of joined) {
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
  const currentId = current?.channel.id ?? null;
  const currentNewest = newestSeq(current ?? undefined);
  useEffect(() => {
    if (currentId)
      setSeen((s) => (s[currentId] === currentNewest ? s : { ...s, [currentId]: currentNewest }));
  }, [currentId, currentNewest]);
  const unread: Record<string, Unread> = {};
  if (me)
    for (const c of joined)
      if (c.id !== currentId && seen[c.id] !== undefined)
        unread[c.id] = unreadOf(client.view(c.id), seen[c.id] as number, me);
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

  // Side panes give way on narrow terminals: the members below 100 columns, the channels below 60
  // (Tab still reaches the channel list's keys; /wsync/list prints the channels).
  const side = Math.min(32, Math.max(24, Math.floor(columns / 4.5)));
  const showChannels = columns >= 60;
  const showMembers = current !== null && columns >= 100;
  const paneHeight = Math.max(6, rows - 4);
  const paneWidth = columns - (showChannels ? side : 0) - (showMembers ? side : 0);
  // Inside the border (2) and the padding (2).
  const laid = paneLines(
    current,
    output,
    Math.max(4, paneWidth - 4),
    currentId ? marker[currentId] : undefined,
    me?.did,
  );
  const room = scrollRoom(paneHeight, laid.pinned.length);

  useEffect(
    () => client.events.on("error", ({ message }) => setStatus({ text: message, error: true })),
    [client],
  );
  useEffect(
    () =>
      client.events.on("key-changed", ({ handle }) =>
        setStatus({ text: `${handle}'s key changed: compare with \`wsync verify ${handle}\``, error: true }),
      ),
    [client],
  );

  useEffect(
    () =>
      client.events.on("security-warning", (w) => {
        // Other channels' warnings too: the status line is the only place that shows them now.
        const name = client.view(w.channelId)?.channel.value.name;
        setStatus({ text: displaySafe(`${name ? `#${name}: ` : ""}${w.text}`), error: true });
      }),
    [client],
  );

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
      setStatus({ text: `#${client.view(id)?.channel.value.name ?? id}`, error: false });
    });

  /** Enter on the input line; `newPaste`: the text just changed, so a multi-line one is asked about again. */
  async function submit(line: string, newPaste = false): Promise<void> {
    const text = line.trim();
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
      await task(irc.name === "join" ? "Joining" : "Working", async () => {
        const r = await performIrc(client, irc, state.currentChannelId);
        if (r.quit) {
          exit();
          return;
        }
        if (r.output) setOutput(r.output);
        if (r.openChannelId) {
          setScroll(0);
          setMarker((m) => ({
            ...m,
            [r.openChannelId as string]: newestSeq(client.view(r.openChannelId as string)),
          }));
        }
        if (r.status) setStatus({ text: r.status, error: false });
        if (irc.name === "part") client.state.currentChannelId = null;
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
          if (r.clear) setOutput([]);
          if (r.output) setOutput(r.output);
          if (r.openChannelId) setScroll(0);
          if (r.status) setStatus({ text: r.status, error: false });
          if (!r.openChannelId && r.output) client.state.currentChannelId = null;
        },
      );
      return;
    }
    const channelId = state.currentChannelId;
    if (!channelId) {
      setStatus({ text: "Open a channel first (Tab to the channel list, or /wsync/join)", error: true });
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

  useInput((ch, key) => {
    if (key.escape) {
      exit();
      return;
    }
    // Alt+1…9: the nth joined channel; Ctrl+N / Ctrl+P: the next / previous one (from any pane).
    if ((key.meta && /^[1-9]$/.test(ch)) || (key.ctrl && (ch === "n" || ch === "p"))) {
      if (focus === "input") swallowNext();
      if (joined.length === 0) return;
      const at = joined.findIndex((c) => c.id === currentId);
      const target = key.meta
        ? joined[Number(ch) - 1]
        : joined[
            (at + (ch === "n" ? 1 : joined.length - 1) + (at < 0 && ch === "p" ? 1 : 0)) % joined.length
          ];
      if (target) switchTo(target.id);
      return;
    }
    // Tab in the input completes a #channel or a handle when the last word is one; otherwise it moves on.
    if (key.tab && !key.shift && focus === "input" && input && completeInput(input)) return;
    if (key.tab) {
      const i = PANES.indexOf(focus);
      setFocus(PANES[(i + (key.shift ? PANES.length - 1 : 1)) % PANES.length] as Pane);
      return;
    }
    if (focus === "input") {
      // Spec §5: Ctrl+U (or Cmd+U) clears the input.
      if (key.ctrl && ch === "u") {
        swallowNext();
        setInput("");
        setPasted(null);
        return;
      }
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
    if (focus === "messages") {
      // Scrolling is by terminal lines, over the same layout the pane draws (cli/tui/lines.ts).
      const page = Math.max(1, room - 1);
      const top = Math.max(0, laid.lines.length - room);
      let next = scroll;
      if (key.upArrow) next = scroll + 1;
      else if (key.pageUp) next = scroll + page;
      else if (key.home) next = top;
      else if (key.downArrow) next = scroll - 1;
      else if (key.pageDown) next = scroll - page;
      else if (key.end) next = 0;
      else return;
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
    }
  });

  const user = state.auth.user;
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
            width={side}
          />
        ) : null}
        <MessagePane
          view={current}
          output={output}
          focused={focus === "messages"}
          height={paneHeight}
          width={Math.max(4, paneWidth - 4)}
          scroll={scroll}
          newSince={currentId ? marker[currentId] : undefined}
          meDid={me?.did}
        />
        {showMembers && current ? (
          <MembersPane members={current.members} focused={focus === "members"} width={side} />
        ) : null}
      </Box>
      <Box borderStyle="single" borderColor={focus === "input" ? "green" : "gray"} paddingX={1}>
        <Text color="green">{"> "}</Text>
        <TextInput
          key={inputGen}
          value={input}
          onChange={onInputChange}
          onSubmit={(v) => void submit(v)}
          focus={focus === "input"}
          placeholder="message, or /wsync/help"
        />
      </Box>
      <Box paddingX={1} justifyContent="space-between">
        <Box flexShrink={1} flexGrow={1}>
          <Text color={status.error ? "red" : "gray"} wrap="truncate">
            {busy ? (
              <Text color="cyan">
                <Spinner type="dots" /> {busy}…{" "}
              </Text>
            ) : null}
            {status.text}
          </Text>
        </Box>
        <Text wrap="truncate" color={state.connection === "connected" ? "green" : "red"}>
          {totalUnread ? `${totalUnread} unread${totalMentions ? `, ${totalMentions} @` : ""} · ` : ""}
          {user ? handleWithoutSuffix(user.handle) : ""} ·{" "}
          {state.connection === "connected" ? "CONNECTED" : "DISCONNECTED"}
        </Text>
      </Box>
    </Box>
  );
}

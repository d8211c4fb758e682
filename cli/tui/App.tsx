import { Box, Text, useApp, useInput, useStdout } from "ink";
import Spinner from "ink-spinner";
import TextInput from "ink-text-input";
import { useEffect, useRef, useState } from "react";
import { handleWithoutSuffix, type WsyncClient } from "../../core/client/index.ts";
import { displaySafe, parseCommandLine } from "../../core/commands/index.ts";
import { sendBlockedText } from "../format.ts";
import { ChannelList } from "./ChannelList.tsx";
import { perform } from "./commands.ts";
import { MembersPane } from "./MembersPane.tsx";
import { MessagePane, paneLines, scrollRoom } from "./MessagePane.tsx";
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
  // Ctrl+U reaches the text field too, which would insert a "u": swallow that one change.
  const clearing = useRef(false);
  const onInputChange = (v: string) => {
    if (clearing.current) return;
    setInput(v);
  };

  const current = state.currentChannelId ? (state.open[state.currentChannelId] ?? null) : null;

  // Side panes give way on narrow terminals: the members below 100 columns, the channels below 60
  // (Tab still reaches the channel list's keys; /wsync/list prints the channels).
  const side = Math.min(32, Math.max(24, Math.floor(columns / 4.5)));
  const showChannels = columns >= 60;
  const showMembers = current !== null && columns >= 100;
  const paneHeight = Math.max(6, rows - 4);
  const paneWidth = columns - (showChannels ? side : 0) - (showMembers ? side : 0);
  // Inside the border (2) and the padding (2).
  const laid = paneLines(current, output, Math.max(4, paneWidth - 4));
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

  async function submit(line: string): Promise<void> {
    setInput("");
    const text = line.trim();
    if (!text) return;
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
    if (key.tab) {
      const i = PANES.indexOf(focus);
      setFocus(PANES[(i + (key.shift ? PANES.length - 1 : 1)) % PANES.length] as Pane);
      return;
    }
    if (focus === "input") {
      // Spec §5: Ctrl+U (or Cmd+U) clears the input.
      if (key.ctrl && ch === "u") {
        clearing.current = true;
        setInput("");
        queueMicrotask(() => {
          clearing.current = false;
        });
      }
      return;
    }
    if (focus === "channels") {
      if (key.upArrow) setSelected((s) => Math.max(0, s - 1));
      if (key.downArrow) setSelected((s) => Math.min(state.channels.length - 1, s + 1));
      if (key.return) {
        const c = state.channels[selected];
        if (c) void openChannel(c.id);
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
        />
        {showMembers && current ? (
          <MembersPane members={current.members} focused={focus === "members"} width={side} />
        ) : null}
      </Box>
      <Box borderStyle="single" borderColor={focus === "input" ? "green" : "gray"} paddingX={1}>
        <Text color="green">{"> "}</Text>
        <TextInput
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
          {user ? handleWithoutSuffix(user.handle) : ""} ·{" "}
          {state.connection === "connected" ? "CONNECTED" : "DISCONNECTED"}
        </Text>
      </Box>
    </Box>
  );
}

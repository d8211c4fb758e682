/**
 * Issue 30 on the interactive screen, as irssi does it: `/msg handle text` writes to a person (the
 * screen's `/msg #channel text` stays as it was), their conversation becomes a window after the
 * channels, and `/query handle` opens one as the current window, where plain lines go to that person.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { render } from "ink-testing-library";
import { App } from "../../cli/tui/App.tsx";
import { parseIrc } from "../../cli/tui/screen-commands.ts";
import { signedUp, texts, until } from "../core/client/engine-harness.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

const ENTER = "\r";
const short = (h: string) => h.slice(0, h.indexOf("."));

async function shows(get: () => string | undefined, text: string | RegExp, ms = 8000): Promise<string> {
  const ok = () => {
    const f = (get() ?? "").replace(/[│\s]+/g, " ");
    return typeof text === "string" ? f.includes(text) : text.test(f);
  };
  await until(ok, ms, `screen to show ${text}`).catch((e) => {
    throw new Error(`${(e as Error).message}; the screen was:\n${get()}`);
  });
  return get() ?? "";
}

async function run(stdin: { write(s: string): void }, line: string): Promise<void> {
  for (const ch of line) {
    stdin.write(ch);
    await Bun.sleep(1);
  }
  stdin.write(ENTER);
}

/** The person's conversation as their client finds it, opened, with its decrypted texts. */
async function received(who: Awaited<ReturnType<typeof signedUp>>, text: string): Promise<string> {
  await until(() => (who.client.state.conversations?.length ?? 0) > 0, 8000, "the conversation frame");
  const id = who.client.state.conversations?.[0]?.channel.id as string;
  if (!who.client.view(id)) await who.client.open(id, { focus: false });
  await until(() => texts(who.client, id).includes(text), 8000, `"${text}" to arrive`);
  return id;
}

test("parse: /msg takes a handle or a #channel; /query takes one handle", () => {
  expect(parseIrc("/msg bob hi there")).toEqual({ name: "msg", ref: "bob", text: "hi there" });
  expect(parseIrc("/msg #lunch hi")).toEqual({ name: "msg", ref: "#lunch", text: "hi" });
  expect(parseIrc("/query @bob")).toEqual({ name: "query", handle: "bob" });
  expect(parseIrc("/query")).toEqual({ error: "Usage: /query handle" });
  expect(parseIrc("/query bob carol")).toEqual({ error: "Usage: /query handle" });
});

test("/msg handle text writes to the person; /query handle opens a query window that plain lines go to", async () => {
  const a = await signedUp(t.url, "alice");
  const b = await signedUp(t.url, "bob");
  const c = await signedUp(t.url, "carol");
  const { channel } = await a.client.createChannel({ name: "lunch", type: "public" });
  await a.client.open(channel.id);
  await a.client.refreshChannels();
  const ui = render(<App client={a.client} bell={() => undefined} />);
  try {
    // The screen's /msg #channel text still goes to the channel.
    await run(ui.stdin, "/msg #lunch for the channel");
    await shows(ui.lastFrame, "Sent to #lunch");
    // /msg handle text: to bob, in his one conversation with alice, without leaving this window.
    await run(ui.stdin, `/msg ${short(b.handle)} hi bob`);
    await shows(ui.lastFrame, `Sent to ${short(b.handle)}`);
    const toBob = await received(b, "hi bob");
    expect(b.client.state.conversations?.[0]?.kind).toBe("pair");
    // It is window 3, after the channel; the channel list shows it under Direct.
    await shows(ui.lastFrame, "Direct");
    await run(ui.stdin, "/window 3");
    await shows(ui.lastFrame, `3 ${short(b.handle)} [direct]`);
    await shows(ui.lastFrame, "hi bob");
    // Bob answers: it shows in the window.
    await b.client.send(toBob, "hello alice");
    await shows(ui.lastFrame, "hello alice");

    // /query carol: the conversation opens as the current window (4); a plain line goes to carol.
    await run(ui.stdin, `/query ${short(c.handle)}`);
    await shows(ui.lastFrame, `4 ${short(c.handle)} [direct]`);
    await shows(ui.lastFrame, `Query with ${short(c.handle)}`);
    await run(ui.stdin, "are you coming to lunch");
    await received(c, "are you coming to lunch");
    // /query bob again: the same conversation, window 3, not a new one.
    await run(ui.stdin, `/query ${short(b.handle)}`);
    await shows(ui.lastFrame, `3 ${short(b.handle)} [direct]`);
    expect(a.client.state.conversations?.length).toBe(2);
    // A handle nobody has: said, no window.
    await run(ui.stdin, "/msg nobody-here-at-all hello");
    await shows(ui.lastFrame, "No user with that handle");
    expect(a.client.state.conversations?.length).toBe(2);
  } finally {
    ui.unmount();
    for (const p of [a, b, c]) p.client.disconnect();
  }
}, 60_000);

/**
 * Message formatting as drawn (web/features/chat/messages/MessageText.tsx): Markdown becomes React
 * elements, never HTML; links only to web and mail addresses, opened safely; the reader's @handle
 * marked outside code; the server-side render draws the same; and Edit puts the Markdown source,
 * not the drawn text, into the composer.
 */
import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { renderToString } from "react-dom/server";
import { ChatView } from "../../../web/features/chat/ChatView.tsx";
import { formatted } from "../../../web/features/chat/messages/MessageText.tsx";
import { click, installFakeClient, type Mounted, mount, settle } from "../harness.ts";
import { item, ME, openChannel, resetChat } from "./fixtures.ts";

let ui: Mounted;

beforeEach(() => {
  resetChat();
  installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

async function showMessages(...texts: string[]) {
  const id = openChannel({
    items: texts.map((text) => item({ text, clientMsgId: crypto.randomUUID().replaceAll("-", "") })),
  });
  ui = await mount(<ChatView channelId={id} mobile={false} />);
  await settle();
  return id;
}
const body = (k = 0) => ui.$$(".msg .body")[k] as HTMLElement;

describe("formatting", () => {
  test("bold, italic, strike and code as elements", async () => {
    await showMessages("**bold** _it_ ~~gone~~ `co*de*`");
    expect(body().querySelector("strong")?.textContent).toBe("bold");
    expect(body().querySelector("em")?.textContent).toBe("it");
    expect(body().querySelector("del")?.textContent).toBe("gone");
    expect(body().querySelector("code")?.textContent).toBe("co*de*");
    expect(body().textContent).toBe("bold it gone co*de*");
  });

  test("code blocks, quotes and lists", async () => {
    await showMessages("look:\n```ts\nconst a = **1**;\n  b();\n```\n> quoted _it_\n- one\n- two\n3. three");
    const pre = body().querySelector("pre");
    expect(pre?.textContent).toBe("const a = **1**;\n  b();");
    expect(pre?.querySelector("code")).not.toBeNull();
    expect(pre?.querySelector("strong")).toBeNull();
    expect(pre?.getAttribute("data-lang")).toBe("ts");
    expect(body().querySelector("blockquote em")?.textContent).toBe("it");
    expect([...body().querySelectorAll("ul > li")].map((l) => l.textContent)).toEqual(["one", "two"]);
    const ol = body().querySelector("ol");
    expect(ol?.getAttribute("start")).toBe("3");
    expect(ol?.textContent).toBe("three");
  });

  test("a plain one-paragraph message is drawn as plain text, as before", async () => {
    await showMessages("just words\nand a second line");
    expect(body().children).toHaveLength(0);
    expect(body().textContent).toBe("just words\nand a second line");
  });

  test("paragraphs keep a blank line between them", async () => {
    await showMessages("first\n\nsecond **b**");
    expect(body().textContent).toBe("first\n\nsecond b");
  });
});

describe("links", () => {
  test("bare addresses and [text](address): new tab, no opener, no referrer, nofollow, address as tooltip", async () => {
    await showMessages(
      "see https://example.com/some_path_here, and [the docs](https://docs.example.com/a_b_c)",
    );
    const [bare, named] = [...body().querySelectorAll("a")];
    expect(bare?.getAttribute("href")).toBe("https://example.com/some_path_here");
    expect(bare?.textContent).toBe("https://example.com/some_path_here");
    expect(named?.getAttribute("href")).toBe("https://docs.example.com/a_b_c");
    expect(named?.textContent).toBe("the docs");
    for (const a of [bare, named]) {
      expect(a?.getAttribute("target")).toBe("_blank");
      expect(a?.getAttribute("rel")).toBe("noopener noreferrer nofollow");
      expect(a?.getAttribute("title")).toBe(a?.getAttribute("href") ?? "");
    }
  });

  test("XSS attempts are shown as text: no script, no handler, no javascript: or data: link", async () => {
    const attacks = [
      "[x](javascript:alert(1))",
      "[y](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "<script>alert(1)</script>",
      '<img src=x onerror="alert(1)">',
      "**<b onmouseover=alert(1)>hi</b>**",
      "[z](vbscript:msgbox(1)) javascript:alert(1)",
    ];
    await showMessages(...attacks);
    const list = ui.$(".chat-list") as HTMLElement;
    expect(list.querySelectorAll("script, img, iframe, b[onmouseover]")).toHaveLength(0);
    expect(list.querySelectorAll(".body a")).toHaveLength(0);
    for (const el of list.querySelectorAll(".body *"))
      expect([...el.attributes].filter((a) => a.name.startsWith("on"))).toEqual([]);
    expect(body(0).textContent).toBe("[x](javascript:alert(1))");
    expect(body(2).textContent).toBe("<script>alert(1)</script>");
    expect(body(3).textContent).toBe('<img src=x onerror="alert(1)">');
    expect(body(4).querySelector("strong")?.textContent).toBe("<b onmouseover=alert(1)>hi</b>");
  });
});

describe("mentions", () => {
  test("the reader's @handle is marked in text and formatting, not in code", async () => {
    await showMessages("hi **@neo** and @neo.wsync.local, not `@neo` nor @neon");
    const marks = [...body().querySelectorAll("mark.mention")].map((m) => m.textContent);
    expect(marks).toEqual(["@neo", "@neo.wsync.local"]);
    expect(body().querySelector("strong mark.mention")).not.toBeNull();
    expect(body().querySelector("code mark")).toBeNull();
  });
});

describe("server-side render", () => {
  test("renderToString draws the same formatting, escaping anything that looks like HTML", () => {
    const html = renderToString(
      <span>{formatted("**bold** _it_ `<i>x</i>` <script>alert(1)</script>", "neo")}</span>,
    );
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<em>it</em>");
    expect(html).toContain("<code>&lt;i&gt;x&lt;/i&gt;</code>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script");
  });
});

describe("editing", () => {
  test("Edit puts the Markdown source (of the newest edit) in the composer, not the drawn text", async () => {
    const clientMsgId = "c".repeat(32);
    const mine = item({
      author: { did: ME, handle: "neo.wsync.local" },
      text: "**old**",
      clientMsgId,
      seq: 1,
    });
    const edit = item({
      author: { did: ME, handle: "neo.wsync.local" },
      text: "**bold** and `code`",
      clientMsgId: "d".repeat(32),
      seq: 2,
      rich: { type: "edit", to: { did: ME, clientMsgId } },
    });
    const id = openChannel({ items: [mine, edit] });
    ui = await mount(<ChatView channelId={id} mobile={false} />);
    await settle();
    expect(body().querySelector("strong")?.textContent).toBe("bold");
    await click(ui.$('.msg button[aria-label="Edit"]'));
    await settle();
    expect(ui.$<HTMLTextAreaElement>(".composer textarea")?.value).toBe("**bold** and `code`");
  });
});

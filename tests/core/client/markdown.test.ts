/**
 * The message Markdown subset (core/client/view/markdown.ts): what becomes formatting, what stays as
 * written, that only web and mail addresses become links, and that no input makes it slow (each
 * huge input below would take minutes with a backtracking parser; the test's timeout is the check).
 */
import { describe, expect, test } from "bun:test";
import { type MdInline, parseInline, parseMarkdown, safeHref } from "../../../core/client/view/markdown.ts";
import { markdownPlain } from "../../../core/client/view/markdown-plain.ts";

const p = (text: string) => parseMarkdown(text);
const one = (text: string) => {
  const blocks = parseMarkdown(text);
  expect(blocks).toHaveLength(1);
  const b = blocks[0];
  if (b?.type !== "p") throw new Error(`not a paragraph: ${JSON.stringify(b)}`);
  return b.children;
};
/** Every link anywhere in the tree. */
function links(nodes: readonly MdInline[]): string[] {
  return nodes.flatMap((n) =>
    typeof n === "string" || n.type === "code"
      ? []
      : [...(n.type === "link" ? [n.href] : []), ...links(n.children)],
  );
}

describe("inline formatting", () => {
  test("bold, italic, strike and code", () => {
    expect(one("**bold** _it_ `code`")).toEqual([
      { type: "strong", children: ["bold"] },
      " ",
      { type: "em", children: ["it"] },
      " ",
      { type: "code", text: "code" },
    ]);
    expect(one("__b__ *i* ~~gone~~")).toEqual([
      { type: "strong", children: ["b"] },
      " ",
      { type: "em", children: ["i"] },
      " ",
      { type: "del", children: ["gone"] },
    ]);
    expect(one("***both***")).toEqual([{ type: "strong", children: [{ type: "em", children: ["both"] }] }]);
  });

  test("nesting", () => {
    expect(one("**bold _and it_ ~~and gone~~**")).toEqual([
      {
        type: "strong",
        children: [
          "bold ",
          { type: "em", children: ["and it"] },
          " ",
          { type: "del", children: ["and gone"] },
        ],
      },
    ]);
    expect(one("*a **b** c*")).toEqual([
      { type: "em", children: ["a ", { type: "strong", children: ["b"] }, " c"] },
    ]);
    // Nesting deeper than the limit (six) shows the inner markers as written.
    const deep = markdownPlain("~~a **a __a *a _a ***a ___a x a___ a*** a_ a* a__ a** a~~");
    expect(deep).toBe("a a a a a a ___a x a___ a a a a a a");
    expect(markdownPlain("~~a **a __a *a _a ***a x a*** a_ a* a__ a** a~~")).toBe(
      "a a a a a a x a a a a a a",
    );
  });

  test("unclosed markers are characters", () => {
    expect(one("**unclosed and *half")).toEqual(["**unclosed and *half"]);
    expect(one("a ` tick")).toEqual(["a ` tick"]);
    expect(one("~~nope")).toEqual(["~~nope"]);
    expect(one("[text](https://example.com")).toEqual([
      "[text](",
      { type: "link", href: "https://example.com/", children: ["https://example.com"] },
    ]);
    expect(one("** not bold **")).toEqual(["** not bold **"]);
  });

  test("markers inside words stay as written", () => {
    expect(one("2*3*4 a**b**c snake_case_name ~~x~~y")).toEqual(["2*3*4 a**b**c snake_case_name ~~x~~y"]);
    expect(one("file_name.txt and my__dunder__name")).toEqual(["file_name.txt and my__dunder__name"]);
    expect(one("a * b * c")).toEqual(["a * b * c"]);
  });

  test("a backslash escapes a marker", () => {
    expect(one("\\*not em\\* and \\`not code\\`")).toEqual(["*not em* and `not code`"]);
    expect(one("C:\\path\\to")).toEqual(["C:\\path\\to"]);
  });

  test("code spans hold markers literally and bind tighter than emphasis", () => {
    expect(one("`**not bold** _nor it_ [x](https://a.b)`")).toEqual([
      { type: "code", text: "**not bold** _nor it_ [x](https://a.b)" },
    ]);
    expect(one("*a `*` b*")).toEqual([{ type: "em", children: ["a ", { type: "code", text: "*" }, " b"] }]);
    expect(one("``a ` b``")).toEqual([{ type: "code", text: "a ` b" }]);
    expect(one("` `` `")).toEqual([{ type: "code", text: "``" }]);
    expect(one("*a `b* c`")).toEqual(["*a ", { type: "code", text: "b* c" }]);
    expect(one("```one line```")).toEqual([{ type: "code", text: "one line" }]);
  });

  test("line breaks are kept; emphasis may cross one", () => {
    expect(one("a\nb")).toEqual(["a\nb"]);
    expect(one("**a\nb**")).toEqual([{ type: "strong", children: ["a\nb"] }]);
  });
});

describe("links", () => {
  test("bare web addresses, keeping underscores and their own parentheses", () => {
    expect(one("see https://example.com/some_path_here_ now")).toEqual([
      "see ",
      {
        type: "link",
        href: "https://example.com/some_path_here_",
        children: ["https://example.com/some_path_here_"],
      },
      " now",
    ]);
    expect(one("(https://en.wikipedia.org/wiki/Foo_(bar)).")).toEqual([
      "(",
      {
        type: "link",
        href: "https://en.wikipedia.org/wiki/Foo_(bar)",
        children: ["https://en.wikipedia.org/wiki/Foo_(bar)"],
      },
      ").",
    ]);
    expect(one("_see https://a.com/x_y_")).toEqual([
      {
        type: "em",
        children: ["see ", { type: "link", href: "https://a.com/x_y", children: ["https://a.com/x_y"] }],
      },
    ]);
    expect(one("**https://a.com/b**")).toEqual([
      {
        type: "strong",
        children: [{ type: "link", href: "https://a.com/b", children: ["https://a.com/b"] }],
      },
    ]);
    expect(links(one("xhttps://a.com http:// https://"))).toEqual([]);
  });

  test("[text](address) with http(s) or mailto, text formatted, no link inside a link", () => {
    expect(one("[the **docs**](https://example.com/a_b)")).toEqual([
      {
        type: "link",
        href: "https://example.com/a_b",
        children: ["the ", { type: "strong", children: ["docs"] }],
      },
    ]);
    expect(one("[mail me](mailto:me@example.com)")).toEqual([
      { type: "link", href: "mailto:me@example.com", children: ["mail me"] },
    ]);
    expect(one("[https://a.com](https://b.com)")).toEqual([
      { type: "link", href: "https://b.com/", children: ["https://a.com"] },
    ]);
  });

  test("XSS attempts stay text", () => {
    for (const attack of [
      "[x](javascript:alert(1))",
      "[x](JaVaScRiPt:alert(1))",
      "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "[x](vbscript:msgbox(1))",
      "[x](/relative/path)",
      "[x](//evil.example)",
      "[x](file:///etc/passwd)",
      "[x](javascript&colon;alert(1))",
      "<script>alert(1)</script>",
      '<img src=x onerror="alert(1)">',
      "javascript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
    ]) {
      const tree = p(attack);
      expect(JSON.stringify(tree)).not.toContain('"type":"link"');
      expect(markdownPlain(attack)).toBe(attack);
    }
    expect(safeHref("javascript:alert(1)")).toBeNull();
    expect(safeHref("data:text/html,x")).toBeNull();
    expect(safeHref(" https://a.com")).toBe("https://a.com/");
    expect(safeHref("HTTPS://A.COM/x")).toBe("https://a.com/x");
  });
});

describe("blocks", () => {
  test("code blocks: a language word is hidden, Slack's one-line fences work, unclosed runs to the end", () => {
    expect(p("```js\nconst a = **1**;\n```\nafter")).toEqual([
      { type: "pre", text: "const a = **1**;", lang: "js" },
      { type: "p", children: ["after"] },
    ]);
    expect(p("```first line here\nsecond```")).toEqual([
      { type: "pre", text: "first line here\nsecond", lang: "" },
    ]);
    expect(p("before\n```\n<b>x</b>\n  indented")).toEqual([
      { type: "p", children: ["before"] },
      { type: "pre", text: "<b>x</b>\n  indented", lang: "" },
    ]);
  });

  test("quotes, nested, with formatting inside", () => {
    expect(p("> a **b**\n> c\nafter")).toEqual([
      {
        type: "quote",
        children: [{ type: "p", children: ["a ", { type: "strong", children: ["b"] }, "\nc"] }],
      },
      { type: "p", children: ["after"] },
    ]);
    expect(p(">> deep")).toEqual([
      { type: "quote", children: [{ type: "quote", children: [{ type: "p", children: ["deep"] }] }] },
    ]);
    // Past the depth limit the markers stay.
    expect(markdownPlain(">>>>>>x")).toContain(">x");
  });

  test("lists: bullets, numbers with their start, continuation lines, no list without a space", () => {
    expect(p("- one\n* two _it_\n+ three")).toEqual([
      {
        type: "list",
        ordered: false,
        start: 1,
        items: [["one"], ["two ", { type: "em", children: ["it"] }], ["three"]],
      },
    ]);
    expect(p("3. c\n4) d\n   more of d")).toEqual([
      { type: "list", ordered: true, start: 3, items: [["c"], ["d\nmore of d"]] },
    ]);
    expect(p("-1 degrees\n*emphasis*")).toEqual([
      { type: "p", children: ["-1 degrees\n", { type: "em", children: ["emphasis"] }] },
    ]);
    expect(p("text\n- a\n1. b")).toEqual([
      { type: "p", children: ["text"] },
      { type: "list", ordered: false, start: 1, items: [["a"]] },
      { type: "list", ordered: true, start: 1, items: [["b"]] },
    ]);
  });

  test("paragraphs split on blank lines", () => {
    expect(p("a\n\n\nb\r\nc")).toEqual([
      { type: "p", children: ["a"] },
      { type: "p", children: ["b\nc"] },
    ]);
    expect(p("")).toEqual([]);
  });
});

describe("plain text (for the terminal and one-line quotes)", () => {
  test("markers go, code and addresses stay", () => {
    expect(markdownPlain("**bold** _it_ `code` [docs](https://x.com/d) https://y.com")).toBe(
      "bold it `code` docs <https://x.com/d> https://y.com",
    );
    expect(markdownPlain("> q\n- a\n2. b\n```\nx\n```")).toBe("> q\n• a\n2. b\nx");
  });
});

describe("no input is slow (linear: each would take minutes if it backtracked)", () => {
  const N = 64 * 1024;
  const huge: Record<string, string> = {
    "unclosed stars": "*a ".repeat(N / 3),
    "unclosed strong": "**a ".repeat(N / 4),
    "unclosed underscores": "_a ".repeat(N / 3),
    "unclosed ticks": "` ".repeat(N / 2),
    "tick runs of every length": Array.from({ length: 300 }, (_, k) => "`".repeat(k + 1)).join(" "),
    "link openers": "[a](".repeat(N / 4),
    "link openers with addresses": "[a](x[a](x".repeat(N / 10),
    "bare address starts": "http://".repeat(N / 7),
    "closing parentheses": `http://x${")".repeat(N)}`,
    "quote markers": ">".repeat(N),
    "quote lines": "> a\n".repeat(N / 4),
    "list lines": "- a\n".repeat(N / 4),
    fences: "```\n".repeat(N / 4),
    "every marker": "**_~~`[h".repeat(N / 8),
    "deep nesting": `${"*_".repeat(N / 4)}x${"_*".repeat(N / 4)}`,
    spaces: `${" ".repeat(N)}x`,
    escapes: "\\*".repeat(N / 2),
    closers: "a* ".repeat(N / 3),
  };
  for (const [name, text] of Object.entries(huge)) {
    test(name, () => {
      const tree = parseMarkdown(text);
      // Nothing is lost: the plain text holds every non-marker character of the input.
      expect(markdownPlain(text).length).toBeGreaterThan(0);
      expect(tree.length).toBeGreaterThan(0);
    });
  }
  test("parseInline on one huge word", () => {
    expect(parseInline("a".repeat(N))).toEqual(["a".repeat(N)]);
  });
});

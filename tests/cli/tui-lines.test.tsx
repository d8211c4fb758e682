/**
 * The interactive screen's own line layout (cli/tui/lines.ts): widths as a terminal draws them, cuts
 * between graphemes, continuation indent, multi-line messages; and the message pane drawn from it,
 * where the newest line is always the last one on screen and nothing spills out of the pane.
 */
import { expect, test } from "bun:test";
import { Box } from "ink";
import { render } from "ink-testing-library";
import stringWidth from "string-width";
import { layoutRow, lineText, spanWidth } from "../../cli/tui/lines.ts";
import { MessagePane, paneLines } from "../../cli/tui/MessagePane.tsx";
import { fixtureView } from "./fixtures.ts";

const head = [{ text: "12:00 " }, { text: "alice" }, { text: " ✓ " }];

test("every laid-out line fits the width, measured as the terminal measures it", () => {
  const body = [
    {
      text: "漢字テスト漢字テスト漢字テスト 👨‍👩‍👧‍👦 family e\u0301te\u0301 naïve 🇬🇪 flags and a verylongwordwithoutanyspacesthatmustbecutsomewhere ok",
    },
  ];
  for (const width of [12, 20, 33, 47]) {
    const lines = layoutRow(head, body, width);
    for (const l of lines) expect(stringWidth(lineText(l))).toBeLessThanOrEqual(width);
    // Nothing lost or added but the spaces where lines break and the indents.
    const joined = lines.map((l) => lineText(l).trim()).join("");
    expect(joined.replace(/ /g, "")).toBe(`12:00alice✓${body[0]?.text}`.replace(/ /g, ""));
  }
});

test("graphemes are never split: combining accents, ZWJ emoji and flags stay whole", () => {
  const family = "👨‍👩‍👧‍👦";
  const text = `${family.repeat(6)} e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301 🇬🇪🇬🇪🇬🇪🇬🇪`;
  const lines = layoutRow([], [{ text }], 5);
  for (const l of lines) {
    const t = lineText(l);
    // A cut inside a ZWJ sequence would leave a joiner at an end, a cut inside é a bare accent first.
    expect(t.endsWith("\u200d")).toBe(false);
    expect(t.trimStart().startsWith("\u0301")).toBe(false);
    expect(stringWidth(t)).toBeLessThanOrEqual(5);
  }
  const all = lines.map(lineText).join("");
  expect(all.split(family).length - 1).toBe(6);
  expect(all.split("🇬🇪").length - 1).toBe(4);
});

test("continuation lines are indented under the body; a newline starts a new indented line", () => {
  const lines = layoutRow(
    head,
    [
      {
        text: "one two three four five six seven eight nine ten eleven twelve\nsecond line\n\nafter a blank",
      },
    ],
    40,
  );
  const texts = lines.map(lineText);
  const indent = spanWidth(head);
  expect(texts[0]?.startsWith("12:00 alice ✓ one two")).toBe(true);
  for (const t of texts.slice(1)) expect(t.startsWith(" ".repeat(indent))).toBe(true);
  expect(texts.map((t) => t.trim())).toContain("second line");
  expect(texts.map((t) => t.trim())).toContain("after a blank");
  // The blank line is kept as an (indented) empty line.
  expect(texts.some((t) => t.trim() === "")).toBe(true);
});

test("tabs and control characters do not reach the terminal", () => {
  const lines = layoutRow([], [{ text: "a\tb\u0007c\u001b[2Jd" }], 40);
  const t = lineText(lines[0] ?? []);
  expect([...t].filter((c) => (c.codePointAt(0) ?? 0) < 0x20 || c === "\u007f")).toEqual([]);
  expect(t).toContain("a    b");
});

function longView() {
  const v = fixtureView({ warnings: [], sendBlocked: false });
  const base = v.items.find((i) => i.kind === "message");
  if (!base) throw new Error("fixture has no message");
  const words = Array.from({ length: 60 }, (_, n) => `w${n}`).join(" ");
  v.items = [
    ...Array.from({ length: 12 }, (_, n) => ({
      ...base,
      uri: `u${n}`,
      seq: n + 1,
      text: `short message ${n}`,
    })),
    { ...base, uri: "long", seq: 99, text: `LONG-START ${words} LONG-END` },
  ];
  v.hasMore = false;
  return v;
}

test("a wrapped newest message shows whole at the bottom; its lines push older ones off the top", () => {
  const view = longView();
  const width = 30;
  const height = 14;
  const ui = render(
    <Box width={width + 4}>
      <MessagePane view={view} output={[]} focused={false} height={height} width={width} scroll={0} />
    </Box>,
  );
  const frame = ui.lastFrame() ?? "";
  ui.unmount();
  const rows = frame.split("\n");
  // The pane keeps its height: the layout did not overflow.
  expect(rows.length).toBe(height);
  // The last line inside the border is the end of the newest message; its start is on screen too.
  expect(rows[height - 2]).toContain("LONG-END");
  expect(frame).toContain("LONG-START");
  for (let n = 0; n < 60; n++) expect(frame).toMatch(new RegExp(`\\bw${n}\\b`));
  // Every row is drawn inside the border.
  for (const r of rows) expect(stringWidth(r)).toBeLessThanOrEqual(width + 4);
});

test("scrolling by lines reaches every line exactly once", () => {
  const view = longView();
  const width = 30;
  const height = 10;
  const { lines } = paneLines(view, [], width);
  const room = height - 3;
  const seen: string[] = [];
  for (let scroll = 0; ; scroll += room) {
    const ui = render(
      <Box width={width + 4}>
        <MessagePane view={view} output={[]} focused={false} height={height} width={width} scroll={scroll} />
      </Box>,
    );
    const rows = (ui.lastFrame() ?? "").split("\n").slice(2, -1);
    ui.unmount();
    seen.unshift(...rows.map((r) => r.replace(/^│ /, "").replace(/ *│$/, "").trimEnd()));
    if (scroll + room >= lines.length) break;
  }
  const want = lines.map((l) => lineText(l).trimEnd());
  // Windows from the bottom up, a page at a time: together they hold every line (the top window may
  // repeat a few lines when the count is not a multiple of the page).
  for (const line of want) expect(seen).toContain(line);
});

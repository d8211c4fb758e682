/**
 * The message pane over fixture views: epoch, missing and deleted rows, integrity notes, the
 * channel's warnings and the send-blocked line, as the interactive screen draws them.
 */
import { expect, test } from "bun:test";
import { Box } from "ink";
import { render } from "ink-testing-library";
import { MessagePane } from "../../cli/tui/MessagePane.tsx";
import { SecurityText } from "../../core/client/index.ts";
import { EPOCH, fixtureView, warnings } from "./fixtures.ts";

// Wide enough that no row wraps, so each text can be looked for whole.
const WIDE = 400;

function frame(view: ReturnType<typeof fixtureView>, height = 40, scroll = 0): string {
  const ui = render(
    <Box width={WIDE}>
      <MessagePane view={view} output={[]} focused={false} height={height} width={WIDE - 4} scroll={scroll} />
    </Box>,
  );
  const out = ui.lastFrame() ?? "";
  ui.unmount();
  // Row text only: no border characters, runs of spaces from the layout collapsed.
  return out.replace(/[│┌┐└┘─]/g, " ").replace(/ +/g, " ");
}

test("epoch, missing and deleted rows, and notes beside messages", () => {
  const f = frame(fixtureView());
  expect(f).toContain(`⟳ ${SecurityText.epochChange(EPOCH)}`);
  expect(f).toContain(`--:-- ⋯ ${SecurityText.missing}: seqs 10-12`);
  expect(f).not.toContain("NaN");
  expect(f).toContain(`⋯ ${SecurityText.missing}: seq 14`);
  expect(f).toContain(`∅ ${SecurityText.deletedBy("alice.test")}`);
  expect(f).toContain(`∅ ${SecurityText.deletedUnsigned}`);
  expect(f).toContain("from v1 [legacy key binding]");
  expect(f).toContain("again [replay of an earlier message] [out of order (possible replay)]");
  expect(f).toContain(`[${SecurityText.note["not-a-member"]}]`);
  expect(f).toContain("✓ hello world");
  expect(f).toContain("→ bob.test joined");
});

test("warnings with their text and the send-blocked line, pinned whatever the scroll", () => {
  const f = frame(fixtureView());
  for (const w of warnings) expect(f).toContain(`⚠ ${w.text}`);
  expect(f).toContain(`⚠ ${SecurityText.sendBlocked}`);
  // Scrolled to the oldest rows of a short pane, the warnings are still on screen.
  const scrolled = frame(fixtureView(), 8, 100);
  expect(scrolled).toContain(`⚠ ${warnings[0]?.text}`);
  expect(scrolled).toContain(`⚠ ${SecurityText.sendBlocked}`);
});

test("no warning rows and no send-blocked line when every check passed", () => {
  const f = frame(fixtureView({ warnings: [], sendBlocked: false }));
  expect(f).not.toContain("⚠");
  expect(f).toContain("✓ hello world");
});

test("only the newest warnings are pinned, with a count of the others", () => {
  const many = Array.from({ length: 5 }, (_, n) => ({
    ...(warnings[0] as (typeof warnings)[0]),
    text: `warning ${n}`,
  }));
  const f = frame(fixtureView({ warnings: many }));
  expect(f).toContain("(2 earlier warnings)");
  expect(f).not.toContain("warning 1");
  for (const n of [2, 3, 4]) expect(f).toContain(`warning ${n}`);
});

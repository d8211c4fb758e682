/**
 * Protocol v2 (§7) in the chat view: the security warnings, a composer that says when sending is
 * blocked, the timeline's signed-commit and withheld rows, integrity notes, deletions and signed
 * times. Texts come from SecurityText, so the web says exactly what the CLI says.
 */
import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { clockTime } from "../../../core/client/view/display.ts";
import { SecurityText } from "../../../core/client/view/security-text.ts";
import type { EpochChange, IntegrityNote, SecurityCheck } from "../../../core/client/view/state.ts";
import { Toasts } from "../../../web/components/Toasts.tsx";
import { ChatView } from "../../../web/features/chat/ChatView.tsx";
import { panel } from "../../../web/features/chat/members/panel.ts";
import {
  callsOf,
  type FakeClient,
  installFakeClient,
  key,
  type Mounted,
  mount,
  settle,
  typeInto,
} from "../harness.ts";
import { addItems, item, ME, MORPHEUS, openChannel, resetChat, TRINITY, view, warning } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

async function show(id: string, mobile = false) {
  ui = await mount(
    <>
      <ChatView channelId={id} mobile={mobile} />
      <Toasts />
    </>,
  );
}

const CHECKS: SecurityCheck[] = [
  "signature",
  "creator",
  "key-commitment",
  "chain",
  "members",
  "admission",
  "rollback",
  "fork",
  "legacy-after-v2",
  "handle",
  "key-changed",
];

const all = () =>
  CHECKS.map((check) =>
    warning(check, {
      epochNumber: 4,
      ...(check === "admission" || check === "handle" || check === "key-changed"
        ? { did: MORPHEUS, handle: "morpheus" }
        : {}),
      ...(check === "handle" ? { detail: "was morpheus.wsync.local" } : {}),
    }),
  );

describe("security warnings", () => {
  for (const mobile of [false, true])
    test(`every warning shows with its text (${mobile ? "mobile" : "desktop"})`, async () => {
      const warnings = all();
      await show(openChannel({ warnings }), mobile);
      const shown = ui.$$(".chat-warnings .chat-warn");
      expect(shown.map((p) => p.dataset.check)).toEqual(CHECKS);
      for (const [n, w] of warnings.entries()) {
        expect(shown[n]?.textContent).toContain(w.text);
        expect(shown[n]?.getAttribute("role")).toBe("alert");
      }
      // Refusals by this device are critical; a name or key to compare is a plain warning.
      const critical = shown.filter((p) => p.classList.contains("critical")).map((p) => p.dataset.check);
      expect(critical).toEqual(CHECKS.filter((c) => c !== "handle" && c !== "key-changed"));
      // Only a changed key has the COMPARE action.
      const compare = shown.filter((p) => p.querySelector("button")).map((p) => p.dataset.check);
      expect(compare).toEqual(["key-changed"]);
    });

  test("COMPARE on a changed key opens that member's safety numbers", async () => {
    await show(openChannel({ warnings: [warning("key-changed", { did: MORPHEUS, handle: "morpheus" })] }));
    (ui.$(".chat-warn button") as HTMLButtonElement).click();
    await settle();
    expect(panel.compare).toBe(MORPHEUS);
  });

  test("warnings appear and go as the engine changes them; none, no box", async () => {
    const id = openChannel();
    await show(id);
    expect(ui.$(".chat-warnings")).toBeNull();
    view(id).warnings.push(warning("rollback"));
    await settle();
    expect(ui.$(".chat-warn")?.textContent).toContain(SecurityText.warning("rollback", { epochNumber: 3 }));
    view(id).warnings.splice(0);
    await settle();
    expect(ui.$(".chat-warnings")).toBeNull();
  });
});

describe("sending blocked", () => {
  test("the composer says so, only while blocked", async () => {
    const id = openChannel({ sendBlocked: true, warnings: [warning("fork")] });
    await show(id);
    expect(ui.$(".composer .send-blocked")?.textContent).toBe(SecurityText.sendBlocked);
    view(id).sendBlocked = false;
    await settle();
    expect(ui.$(".composer .send-blocked")).toBeNull();
    expect(ui.text()).not.toContain(SecurityText.sendBlocked);
  });

  test("a send the engine refuses shows the warning text as a failed send, keeping the text", async () => {
    const w = warning("rollback");
    const id = openChannel({ sendBlocked: true, warnings: [w] });
    fake.impl.send = async (_id, text) => {
      // As the engine does: the pending item becomes a failed one with the reason, then it throws.
      addItems(
        view(id),
        item({
          author: { did: ME, handle: "neo.wsync.local" },
          uri: "pending:blocked",
          seq: 0,
          text: String(text),
          state: "failed",
          verified: false,
          error: w.text,
        }),
      );
      throw new Error(w.text);
    };
    await show(id);
    const input = ui.$<HTMLTextAreaElement>(".composer textarea") as HTMLTextAreaElement;
    await typeInto(input, "is anyone there");
    await key(input, "Enter");
    await settle(50);
    expect(callsOf(fake, "send")).toHaveLength(1);
    const row = ui.$(".msg.failed");
    expect(row?.querySelector(".mark")?.textContent).toBe("✗");
    expect(row?.querySelector(".msg-error")?.textContent).toBe(w.text);
    expect(document.body.textContent).toContain("Failed to send message");
    expect(input.value).toBe("is anyone there");
  });
});

const epoch = (extra: Partial<EpochChange> = {}): EpochChange => ({
  epochNumber: 5,
  reason: "join",
  creator: { did: ME, handle: "neo.wsync.local" },
  added: [{ did: TRINITY, handle: "trinity.wsync.local", admission: "link" }],
  removed: [{ did: MORPHEUS, handle: "morpheus.wsync.local" }],
  rekeyed: [],
  linkChanged: true,
  ...extra,
});

describe("timeline", () => {
  test("a signed commit's change is its own row, not a message nor a server notice", async () => {
    const e = epoch();
    await show(
      openChannel({
        items: [item({ seq: 1 }), item({ kind: "epoch", seq: 1.5, epoch: e }), item({ seq: 2 })],
      }),
    );
    const rows = ui.$$(".chat-list .row > div:not(.day)");
    expect(rows.map((r) => r.className)).toEqual(["msg success", "notice epoch", "msg success"]);
    const row = ui.$(".notice.epoch") as HTMLElement;
    expect(row.querySelector(".epoch-text")?.textContent).toBe(
      "neo's client added trinity, removed morpheus, made a new secret link (epoch 5)",
    );
    // Exactly SecurityText's words, with the names as the board shows them everywhere.
    const short = (p: { did: string; handle: string }) => ({
      ...p,
      handle: p.handle.split(".")[0] as string,
    });
    expect(row.querySelector(".epoch-text")?.textContent).toBe(
      SecurityText.epochChange({
        ...e,
        creator: short(e.creator),
        added: e.added.map((a) => ({ ...short(a), admission: a.admission })),
        removed: e.removed.map(short),
      }),
    );
    expect(row.querySelector(".signed-tag")?.textContent).toBe("SIGNED_COMMIT");
    expect(row.querySelector(".mark")).toBeNull();
  });

  test("a member added without checkable evidence makes the commit row a warning", async () => {
    await show(
      openChannel({
        items: [
          item({
            kind: "epoch",
            epoch: epoch({ added: [{ did: TRINITY, handle: "trinity", admission: "none" }], removed: [] }),
          }),
          item({
            kind: "epoch",
            epoch: epoch({
              added: [{ did: TRINITY, handle: "trinity", admission: "link-unchecked" }],
              removed: [],
              linkChanged: false,
            }),
          }),
        ],
      }),
    );
    const [unchecked, byLink] = ui.$$(".notice.epoch");
    expect(unchecked?.classList.contains("warning")).toBe(true);
    expect(byLink?.classList.contains("warning")).toBe(false);
    expect(byLink?.textContent).toContain("trinity (by link; this device cannot check the link)");
  });

  test("withheld records: a missing row with the seq range", async () => {
    await show(
      openChannel({
        items: [
          item({ seq: 3 }),
          item({ kind: "missing", seq: 3.5, missing: { from: 4, to: 6 }, text: null }),
          item({ seq: 7 }),
          item({ kind: "missing", seq: 7.5, missing: { from: 8, to: 8 }, text: null }),
          item({ seq: 9 }),
        ],
      }),
    );
    const missing = ui.$$(".notice.missing");
    expect(missing.map((m) => m.textContent)).toEqual([
      `⚠${SecurityText.missing}seq 4–6`,
      `⚠${SecurityText.missing}seq 8`,
    ]);
    expect(missing.every((m) => m.classList.contains("warning"))).toBe(true);
    expect(ui.$$(".msg")).toHaveLength(3);
  });

  test("integrity notes: small labels; legacy is neutral and keeps ✓, any other is a warning and unverified", async () => {
    const notes: IntegrityNote[] = [
      "replay",
      "out-of-order",
      "not-a-member",
      "outside-epoch",
      "handle-mismatch",
    ];
    await show(
      openChannel({
        items: [
          item({ notes: ["legacy"], text: "from v1" }),
          // Even if an engine left `verified` set, a warning note means not verified.
          item({ notes, verified: true, text: "suspicious" }),
        ],
      }),
    );
    const [legacy, bad] = ui.$$(".msg");
    const labels = (m: Element | undefined) => [...(m?.querySelectorAll(".note") ?? [])];
    expect(labels(legacy).map((n) => n.textContent)).toEqual([SecurityText.note.legacy]);
    expect(labels(legacy)[0]?.classList.contains("warning")).toBe(false);
    expect(legacy?.querySelector(".mark")?.textContent).toBe("✓");
    expect(labels(bad).map((n) => n.textContent)).toEqual(notes.map((n) => SecurityText.note[n]));
    expect(labels(bad).every((n) => n.classList.contains("warning"))).toBe(true);
    expect(bad?.querySelector(".mark")?.textContent).toBe("?");
    expect(bad?.querySelector(".mark")?.classList.contains("ok")).toBe(false);
    // The labels sit beside the text, which stays exactly the message.
    expect(bad?.querySelector(".text")?.textContent).toBe("suspicious");
  });

  test("deletions: deleted by X with a valid signature, else the server's removal", async () => {
    await show(
      openChannel({
        items: [
          item({ text: null, deleted: { did: TRINITY, handle: "trinity.wsync.local", signed: true } }),
          item({ text: null, deleted: { did: TRINITY, handle: "trinity.wsync.local", signed: false } }),
        ],
      }),
    );
    const [signed, unsigned] = ui.$$(".msg.deleted");
    expect(signed?.querySelector(".text")?.textContent).toBe(SecurityText.deletedBy("trinity"));
    expect(signed?.querySelector(".deleted")?.classList.contains("warning")).toBe(false);
    expect(unsigned?.querySelector(".text")?.textContent).toBe(SecurityText.deletedUnsigned);
    expect(unsigned?.querySelector(".deleted")?.classList.contains("warning")).toBe(true);
    expect(ui.$$(".glitch")).toHaveLength(0);
  });

  test("a message shows its signed time, not the server's", async () => {
    const signedAt = "2026-03-02T08:05:00.000Z";
    const createdAt = "2026-03-02T11:47:00.000Z";
    await show(openChannel({ items: [item({ signedAt, createdAt }), item({ createdAt })] }));
    const [a, b] = ui.$$(".msg time");
    expect(a?.textContent).toBe(clockTime(signedAt));
    expect(a?.getAttribute("datetime")).toBe(signedAt);
    expect(b?.textContent).toBe(clockTime(createdAt));
  });
});

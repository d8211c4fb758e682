/**
 * Protocol v3 (§8) on the board: a key change its old key did not sign is a warning row (a signed one
 * is neutral), withheld chain numbers show in their place, the new checks read as what they are in the
 * warnings list, and a member whose key changed says "changed, not verified" until verified again.
 */
import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { SecurityText } from "../../../core/client/view/security-text.ts";
import type { EpochChange, SecurityCheck } from "../../../core/client/view/state.ts";
import { Toasts } from "../../../web/components/Toasts.tsx";
import { ChatView } from "../../../web/features/chat/ChatView.tsx";
import { MembersSidebar } from "../../../web/features/chat/MembersSidebar.tsx";
import { KEY_CHANGED_STATUS } from "../../../web/features/chat/members/MemberRow.tsx";
import { panel } from "../../../web/features/chat/members/panel.ts";
import { CHECK_TITLE } from "../../../web/features/chat/SecurityWarnings.tsx";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  settle,
} from "../harness.ts";
import { item, ME, MORPHEUS, member, openChannel, resetChat, TRINITY, view, warning } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

const keyChange = (signed: boolean, epochNumber: number): EpochChange => ({
  epochNumber,
  reason: "key-change",
  creator: { did: MORPHEUS, handle: "morpheus.wsync.local" },
  added: [],
  removed: [],
  rekeyed: [{ did: MORPHEUS, handle: "morpheus.wsync.local" }],
  linkChanged: false,
  keyChange: { did: MORPHEUS, handle: "morpheus", signed },
});

describe("timeline rows", () => {
  test("a key change without a statement signed by the old key is a warning row; a signed one is neutral", async () => {
    ui = await mount(
      <ChatView
        channelId={openChannel({
          items: [
            item({ seq: 1 }),
            item({ kind: "epoch", seq: 1.5, epoch: keyChange(false, 6) }),
            item({ kind: "epoch", seq: 1.6, epoch: keyChange(true, 7) }),
          ],
        })}
        mobile={false}
      />,
    );
    const [unsigned, signed] = ui.$$(".notice.epoch");
    expect(unsigned?.classList.contains("warning")).toBe(true);
    expect(unsigned?.querySelector(".sym")?.textContent).toBe("⚠");
    expect(unsigned?.querySelector(".epoch-text")?.textContent).toBe(
      "morpheus's key changed: compare safety numbers (epoch 6)",
    );
    expect(signed?.classList.contains("warning")).toBe(false);
    expect(signed?.querySelector(".sym")?.textContent).toBe("◆");
    expect(signed?.querySelector(".epoch-text")?.textContent).toBe(
      "morpheus moved to a new key, signed by the previous one (epoch 7)",
    );
  });

  test("withheld chain numbers: a row in their place naming whose and how many", async () => {
    ui = await mount(
      <ChatView
        channelId={openChannel({
          items: [
            item({ seq: 3 }),
            item({
              kind: "missing",
              seq: 3.6,
              author: { did: TRINITY, handle: "trinity.wsync.local" },
              createdAt: "",
              text: SecurityText.withheld(2, "trinity.wsync.local"),
              state: "failed",
              verified: false,
              withheld: { did: TRINITY, handle: "trinity.wsync.local", device: "ab12", from: 4, to: 5 },
            }),
            item({ seq: 4 }),
            item({
              kind: "missing",
              seq: 4.6,
              createdAt: "",
              text: null,
              withheld: { did: TRINITY, handle: "trinity.wsync.local", device: "ab12", from: 7, to: 7 },
            }),
          ],
        })}
        mobile={false}
      />,
    );
    const rows = ui.$$(".chat-list .row > div:not(.day)");
    expect(rows.map((r) => r.className)).toEqual([
      "msg success",
      "notice missing warning withheld",
      "msg success",
      "notice missing warning withheld",
    ]);
    const [two, one] = ui.$$(".notice.withheld");
    expect(two?.textContent).toBe("⚠2 messages from trinity missing (withheld by the server)#4–5");
    expect(one?.textContent).toBe("⚠1 message from trinity missing (withheld by the server)#7");
  });
});

describe("the warnings list", () => {
  const V3: SecurityCheck[] = ["member-key", "withheld", "deletion", "fresh-device"];
  test("each new check is named and worded; only a fresh device's mark is not red", async () => {
    const warnings = V3.map((check) =>
      warning(check, {
        did: TRINITY,
        handle: "trinity",
        ...(check === "fresh-device"
          ? { did: null, handle: null, epochNumber: null, detail: "2026-11-22" }
          : {}),
      }),
    );
    ui = await mount(<ChatView channelId={openChannel({ warnings })} mobile={false} />);
    const shown = ui.$$(".chat-warnings .chat-warn");
    expect(shown.map((p) => p.dataset.check)).toEqual(V3);
    for (const [n, w] of warnings.entries()) {
      expect(shown[n]?.querySelector(".chat-warn-title")?.textContent).toBe(`${CHECK_TITLE[w.check]}:`);
      expect(shown[n]?.textContent).toContain(w.text);
    }
    expect(shown.filter((p) => p.classList.contains("critical")).map((p) => p.dataset.check)).toEqual([
      "member-key",
      "withheld",
      "deletion",
    ]);
    expect(shown[3]?.textContent).toContain("verified from the server's word since 2026-11-22");
  });
});

describe("a member's safety number", () => {
  const numbers = {
    mine: "11111 22222 33333 44444 55555 66666",
    theirs: "77777 88888 99999 00000 12345 67890",
    pair: "11111 22222 33333 44444 55555 66666 77777 88888 99999 00000 12345 67890",
    theirKey: "BNEWKEY",
    // The new key came in the member's own key-change commit: it is already the pinned one.
    theirKeyChanged: false,
  };

  test('"changed, not verified" while the key-changed warning is open; verifying clears it', async () => {
    const id = openChannel({
      members: [member(ME, "neo.wsync.local", { isOwner: true }), member(MORPHEUS, "morpheus.wsync.local")],
      warnings: [warning("key-changed", { did: MORPHEUS, handle: "morpheus" })],
    });
    fake.impl.safetyNumbers = async () => numbers;
    fake.impl.acceptKeyChange = async () => {
      view(id).warnings = view(id).warnings.filter((w) => !(w.did === MORPHEUS && w.check === "key-changed"));
    };
    ui = await mount(
      <>
        <MembersSidebar channelId={id} mobile={false} />
        <Toasts />
      </>,
    );
    expect(ui.$(".member.warned .warn")?.getAttribute("title")).toBe(`key ${KEY_CHANGED_STATUS}`);
    panel.compare = MORPHEUS;
    await settle();
    await settle();
    const status = () => ui.$('[data-testid="key-status"]')?.textContent ?? null;
    expect(status()).toBe(`SAFETY_NUMBER ⚠ ${KEY_CHANGED_STATUS}`);
    const accept = ui.$$<HTMLButtonElement>(".keys button").find((b) => b.textContent === "Accept new key");
    await click(accept ?? null);
    await settle();
    expect(callsOf(fake, "acceptKeyChange")[0]?.args).toEqual([MORPHEUS, "BNEWKEY"]);
    expect(status()).toBe("SAFETY_NUMBER verified");
    expect(ui.$$(".keys button").some((b) => b.textContent === "Accept new key")).toBe(false);

    // A later change of the same key is changed, not verified, once more.
    view(id).warnings.push(warning("key-changed", { did: MORPHEUS, handle: "morpheus" }));
    await settle();
    expect(status()).toBe(`SAFETY_NUMBER ⚠ ${KEY_CHANGED_STATUS}`);
  });

  test("without a key-changed warning, nothing is said about the safety number", async () => {
    const id = openChannel({
      members: [member(ME, "neo.wsync.local", { isOwner: true }), member(MORPHEUS, "morpheus.wsync.local")],
    });
    fake.impl.safetyNumbers = async () => numbers;
    ui = await mount(<MembersSidebar channelId={id} mobile={false} />);
    panel.compare = MORPHEUS;
    await settle();
    expect(ui.$('[data-testid="key-status"]')).toBeNull();
  });
});

// Issue 33: beside the safety number, what the member's ATProto repository says about the key.
import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { MembersSidebar } from "../../../web/features/chat/MembersSidebar.tsx";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  settle,
} from "../harness.ts";
import { ME, member, openChannel, resetChat, TRINITY } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

const numbers = (proof: unknown) => ({
  mine: "11111 22222 33333 44444 55555 66666",
  theirs: "77777 88888 99999 00000 12345 67890",
  pair: "11111 22222 33333 44444 55555 66666 77777 88888 99999 00000 12345 67890",
  theirKey: "BKEY",
  theirKeyChanged: false,
  proof,
});

async function openNumbers(proof: unknown): Promise<HTMLElement | null> {
  fake.impl.safetyNumbers = async () => numbers(proof);
  ui = await mount(
    <MembersSidebar
      channelId={openChannel({
        members: [member(ME, "neo.wsync.local", { isOwner: true }), member(TRINITY, "trinity.bsky.social")],
      })}
      mobile={false}
    />,
  );
  await click(ui.$$(".member-line")[1] ?? null);
  const btn = ui.$$<HTMLButtonElement>(".keys button").find((b) => b.textContent === "SAFETY_NUMBERS");
  await click(btn ?? null);
  await settle();
  expect(callsOf(fake, "safetyNumbers")[0]?.args).toEqual([TRINITY]);
  return ui.$('[data-testid="key-proof"]');
}

describe("ATProto key proof beside the safety number", () => {
  test("confirmed: names the repository's verified handle", async () => {
    const el = await openNumbers({ status: "confirmed", handle: "trinity.bsky.social", rev: "x" });
    expect(el?.textContent).toBe("key confirmed by @trinity.bsky.social's ATProto repository");
    expect(el?.className).toContain("ok");
  });

  test("no proof: neutral words", async () => {
    const el = await openNumbers({ status: "missing" });
    expect(el?.textContent).toBe("no proof published");
    expect(el?.className).not.toContain("changed");
  });

  test("not matching: a warning with the reason", async () => {
    const el = await openNumbers({
      status: "mismatch",
      reason: "record: it publishes another key (fingerprint ab)",
    });
    expect(el?.textContent).toContain("⚠");
    expect(el?.textContent).toContain("does not match @trinity.bsky.social's ATProto repository");
    expect(el?.className).toContain("changed");
  });

  test("not an ATProto account: nothing is said", async () => {
    expect(await openNumbers(null)).toBeNull();
  });
});

/**
 * The channel's retention in the info panel (docs/protocol-extensions.md "Retention"): it states what
 * is in force and from whom, and only the owner gets the control, which goes through the engine.
 */
import "../dom.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Toasts } from "../../../web/components/Toasts.tsx";
import { MembersSidebar } from "../../../web/features/chat/MembersSidebar.tsx";
import { RetentionText } from "../../../web/features/chat/members/ChannelRetention.tsx";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  settle,
  typeInto,
} from "../harness.ts";
import { ME, member, openChannel, resetChat, TRINITY, view } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;
beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

const crew = (owner: boolean) => [
  member(ME, "neo.wsync.local", { isOwner: owner, online: true }),
  member(TRINITY, "trinity.wsync.local", { isOwner: !owner, online: true }),
];
const section = () => ui.$("[data-testid=info-panel] [data-testid=channel-retention]");
const input = () => ui.$<HTMLInputElement>("[data-testid=channel-retention] input");
const setButton = () => ui.$<HTMLButtonElement>("[data-testid=channel-retention] button");

async function show(id: string) {
  ui = await mount(
    <>
      <MembersSidebar channelId={id} mobile={false} />
      <Toasts />
    </>,
  );
}

describe("retention in the info panel", () => {
  test("states the retention in force and where it comes from; a member has no control", async () => {
    const id = openChannel({
      members: crew(false),
      retention: { days: 30, signedDays: 30, serverMaxDays: 365 },
    });
    await show(id);
    expect(section()?.querySelector("h4")?.textContent).toBe("RETENTION");
    expect(section()?.textContent).toContain("Messages older than 30 days are removed by the server.");
    expect(section()?.textContent).toContain(
      "Owner's setting (signed): 30 days. Server's maximum: 365 days.",
    );
    expect(input()).toBeNull();
  });

  test("no retention: says messages are kept", async () => {
    await show(openChannel({ members: crew(false), retention: null }));
    expect(section()?.textContent).toContain(RetentionText.kept);
  });

  test("the owner sets it through the engine, and the panel follows the engine's state", async () => {
    const id = openChannel({ members: crew(true), retention: null });
    fake.impl.setRetention = async (_id, days) => {
      view(id).retention = { days: Number(days), signedDays: Number(days), serverMaxDays: null };
    };
    await show(id);
    await typeInto(input() as HTMLInputElement, "14");
    await click(setButton());
    await settle();
    expect(callsOf(fake, "setRetention").map((c) => c.args)).toEqual([[id, 14]]);
    expect(section()?.textContent).toContain("Messages older than 14 days are removed by the server.");
  });

  test("a bad number is refused before the engine is asked", async () => {
    const id = openChannel({ members: crew(true), retention: null });
    await show(id);
    await typeInto(input() as HTMLInputElement, "0");
    await click(setButton());
    await settle(20);
    expect(callsOf(fake, "setRetention")).toEqual([]);
    expect(document.body.textContent).toContain(RetentionText.bad);
  });
});

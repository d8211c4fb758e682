/**
 * happy-dom tests of device linking in the browser (protocol §8 "Fresh devices",
 * docs/device-linking.md): "Link from another device" in the Private Key Validation modal (the code as
 * text and QR image, the wait, the six digits, confirm or "They differ"), and the board's "Link a
 * device" (opened from the channel list's menu; the code typed; the key opened from the backup when
 * this browser cannot export it; the digits; send only after confirming).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { encodeQR } from "qr";
import { PrivateKeyValidationModal } from "../../../web/features/auth/PrivateKeyValidationModal.tsx";
import { Board } from "../../../web/features/chat/Board.tsx";
import { DeviceLinkText as T } from "../../../web/features/keys/device-link-ui.tsx";
import { LinkDeviceDialog } from "../../../web/features/keys/LinkDeviceDialog.tsx";
import { qrPath } from "../../../web/features/keys/link-qr.ts";
import { authUi } from "../../../web/state/auth.ts";
import { engineState } from "../../../web/state/engine.ts";
import { win } from "../dom.ts";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  resetState,
  settle,
  submit,
  typeInto,
  until,
} from "../harness.ts";

let view: Mounted | undefined;
let fake: FakeClient;
const navigations: string[] = [];
const savedReplace = Object.getOwnPropertyDescriptor(win.location, "replace");

const CODE_TEXT =
  "abcde-fghjk.BPm0k3Jx1yq2a4Y9XoB6tZs8cV7uW5rN0lE2dH4gK6jM8pQ1sT3vX5zA7cE9gI1kL3nP5rT7vX9zB1dF3hJ5lN7pR9tV";

beforeEach(() => {
  resetState();
  fake = installFakeClient();
  authUi.linkDeviceOpen = false;
  navigations.length = 0;
  Object.defineProperty(win.location, "replace", {
    configurable: true,
    value: (url: string) => navigations.push(url),
  });
});
afterEach(async () => {
  await view?.unmount();
  view = undefined;
  if (savedReplace) Object.defineProperty(win.location, "replace", savedReplace);
  else delete (win.location as unknown as Record<string, unknown>).replace;
});

const body = () => document.body.textContent ?? "";
const button = (label: string) =>
  [...document.querySelectorAll<HTMLButtonElement>("button")].find((b) => b.textContent === label) ?? null;
const digits = () => document.querySelector('[data-testid="link-digits"]')?.textContent ?? null;

/** A receive() the test resolves: the digits arrive when it says so. */
function pendingReceive(confirmation: string) {
  let deliver: () => void = () => undefined;
  const accepted: number[] = [];
  const receive = () =>
    new Promise<{ confirmation: string; accept(): Promise<void> }>((resolve) => {
      deliver = () =>
        resolve({
          confirmation,
          accept: async () => {
            accepted.push(Date.now());
            engineState.auth.keyState = "ready";
          },
        });
    });
  return { receive, deliver: () => deliver(), accepted };
}

describe("the new device: Link from another device", () => {
  test("the code as text and QR image, the wait, the digits; confirming takes the key and opens the board", async () => {
    engineState.auth.keyState = "validate";
    fake.impl.keyBackupStatus = async () => null;
    const link = pendingReceive("042917");
    fake.impl.linkThisDevice = async () => ({
      offer: { code: "abcdefghjk", text: CODE_TEXT, expiresAt: Date.now() + 600_000 },
      receive: link.receive,
    });
    view = await mount(<PrivateKeyValidationModal />);
    await settle(10);
    // Nothing is opened until the user chooses it.
    expect(callsOf(fake, "linkThisDevice")).toHaveLength(0);
    const tab = [...document.querySelectorAll('[role="tab"]')].find((t) => t.textContent === T.tab);
    await click(tab ?? null);
    await until(() => !!document.querySelector('[data-testid="link-code"]'));
    expect(callsOf(fake, "linkThisDevice")).toHaveLength(1);
    expect((document.querySelector('[data-testid="link-code"]') as HTMLTextAreaElement).value).toBe(
      CODE_TEXT,
    );
    // The QR image draws exactly the code's modules.
    const svg = document.querySelector('[data-testid="link-qr"]') as SVGElement;
    const { d, size } = qrPath(CODE_TEXT);
    expect(svg.getAttribute("viewBox")).toBe(`0 0 ${size} ${size}`);
    expect(svg.querySelector("path")?.getAttribute("d")).toBe(d);
    expect(size).toBe(encodeQR(CODE_TEXT, "raw", { ecc: "medium", border: 2 }).length);
    expect(body()).toContain("Waiting for the other device");
    expect(body()).toContain("wsync device add CODE");
    expect(digits()).toBeNull();

    link.deliver();
    await until(() => digits() !== null);
    expect(digits()).toBe("042917");
    expect(link.accepted).toHaveLength(0);
    await click(button(T.same));
    await until(() => navigations.length > 0);
    expect(link.accepted).toHaveLength(1);
    expect(navigations).toEqual(["/sync"]);
  });

  test("They differ: nothing is taken; Start again makes a new code", async () => {
    engineState.auth.keyState = "validate";
    fake.impl.keyBackupStatus = async () => null;
    const links = [pendingReceive("111111"), pendingReceive("222222")];
    let n = 0;
    fake.impl.linkThisDevice = async () => {
      const l = links[n++] ?? links[1];
      return {
        offer: { code: "abcdefghjk", text: `${CODE_TEXT}${n}`, expiresAt: Date.now() + 600_000 },
        receive: l?.receive,
      };
    };
    view = await mount(<PrivateKeyValidationModal />);
    await click([...document.querySelectorAll('[role="tab"]')].find((t) => t.textContent === T.tab) ?? null);
    await until(() => !!document.querySelector('[data-testid="link-code"]'));
    links[0]?.deliver();
    await until(() => digits() === "111111");
    await click(button(T.differ));
    expect(links[0]?.accepted).toHaveLength(0);
    expect(body()).toContain("Nothing was taken from the other device");
    expect(navigations).toEqual([]);
    await click(button(T.startAgain));
    await until(() => !!document.querySelector('[data-testid="link-code"]'));
    expect(callsOf(fake, "linkThisDevice")).toHaveLength(2);
    expect((document.querySelector('[data-testid="link-code"]') as HTMLTextAreaElement).value).toBe(
      `${CODE_TEXT}2`,
    );
  });

  test("a failure (the code expired) is said, with Start again", async () => {
    engineState.auth.keyState = "validate";
    fake.impl.keyBackupStatus = async () => null;
    fake.impl.linkThisDevice = async () => ({
      offer: { code: "abcdefghjk", text: CODE_TEXT, expiresAt: Date.now() + 600_000 },
      receive: async () => {
        throw new Error("The link code expired: start again");
      },
    });
    view = await mount(<PrivateKeyValidationModal />);
    await click([...document.querySelectorAll('[role="tab"]')].find((t) => t.textContent === T.tab) ?? null);
    await until(() => body().includes("The link code expired"));
    expect(button(T.startAgain)).not.toBeNull();
  });
});

describe("the signed-in device: Link a device", () => {
  test("opens from the channel list's menu; a key this page can export: code, digits, send only after confirming", async () => {
    fake.impl.exportPrivateKey = async () => "PRIVATEKEY";
    let sent = 0;
    fake.impl.linkOtherDevice = async () => ({
      confirmation: "042917",
      send: async () => {
        sent++;
      },
    });
    view = await mount(<Board />);
    await settle(20);
    const entry = button("⇄ link a device");
    expect(entry?.getAttribute("aria-haspopup")).toBe("dialog");
    await click(entry);
    expect(authUi.linkDeviceOpen).toBe(true);
    await until(() => !!document.querySelector('textarea[name="linkCode"]'));
    expect(document.getElementById("link-device-title")?.textContent).toBe(T.title);
    await typeInto(
      document.querySelector('textarea[name="linkCode"]') as HTMLTextAreaElement,
      ` ${CODE_TEXT}\n`,
    );
    await submit(document.querySelector("dialog form") as HTMLFormElement);
    await until(() => digits() !== null);
    // The engine exports its own key: none is passed.
    expect(callsOf(fake, "linkOtherDevice")[0]?.args).toEqual([CODE_TEXT, undefined]);
    expect(digits()).toBe("042917");
    expect(sent).toBe(0);
    await click(button(T.same));
    await until(() => body().includes("Sent."));
    expect(sent).toBe(1);
    await click(button(T.close));
    expect(authUi.linkDeviceOpen).toBe(false);
    expect(document.querySelector('[role="dialog"]')).toBeNull();
  });

  test("a key this browser cannot export: the backup passphrase first, then the code; They differ sends nothing", async () => {
    fake.impl.exportPrivateKey = async () => null;
    fake.impl.keyBackupStatus = async () => ({ kind: "passphrase", updatedAt: Date.now() });
    fake.impl.privateKeyFromBackup = async () => "FROMBACKUP";
    let sent = 0;
    fake.impl.linkOtherDevice = async () => ({
      confirmation: "999001",
      send: async () => {
        sent++;
      },
    });
    view = await mount(<LinkDeviceDialog onClose={() => undefined} />);
    await until(() => !!document.querySelector('input[name="backupSecret"]'));
    expect(body()).toContain("cannot be read back");
    expect(document.querySelector('textarea[name="linkCode"]')).toBeNull();
    await typeInto(document.querySelector('input[name="backupSecret"]') as HTMLInputElement, "lantern orbit");
    await submit(document.querySelector("dialog form") as HTMLFormElement);
    await until(() => !!document.querySelector('textarea[name="linkCode"]'));
    expect(callsOf(fake, "privateKeyFromBackup")[0]?.args).toEqual(["lantern orbit"]);
    expect(body()).toContain(T.keyReady);
    await typeInto(document.querySelector('textarea[name="linkCode"]') as HTMLTextAreaElement, CODE_TEXT);
    await submit(document.querySelector("dialog form") as HTMLFormElement);
    await until(() => digits() === "999001");
    expect(callsOf(fake, "linkOtherDevice")[0]?.args).toEqual([CODE_TEXT, "FROMBACKUP"]);
    await click(button(T.differ));
    expect(sent).toBe(0);
    expect(body()).toContain("Nothing was sent");
  });

  test("no backup: the key as text; a wrong backup secret or a refused code is said in place", async () => {
    fake.impl.exportPrivateKey = async () => null;
    fake.impl.keyBackupStatus = async () => null;
    view = await mount(<LinkDeviceDialog onClose={() => undefined} />);
    await until(() => body().includes(T.noBackup));
    expect(document.querySelector('input[name="backupSecret"]')).toBeNull();
    expect(document.querySelector('textarea[name="privateKey"]')).not.toBeNull();
    await view.unmount();

    fake.impl.keyBackupStatus = async () => ({ kind: "recovery-code", updatedAt: Date.now() });
    authUi.backupStatus = undefined;
    fake.impl.privateKeyFromBackup = async () => {
      throw new Error("Wrong passphrase or recovery code (or the backup was altered)");
    };
    view = await mount(<LinkDeviceDialog onClose={() => undefined} />);
    await until(() => !!document.querySelector('input[name="backupSecret"]'));
    await typeInto(document.querySelector('input[name="backupSecret"]') as HTMLInputElement, "AAAA");
    await submit(document.querySelector("dialog form") as HTMLFormElement);
    await until(() => body().includes("Wrong passphrase"));
    expect(document.querySelector('textarea[name="linkCode"]')).toBeNull();
    await view.unmount();

    fake.impl.exportPrivateKey = async () => "PRIVATEKEY";
    fake.impl.linkOtherDevice = async () => {
      throw new Error("No device is waiting with that code (it may have expired)");
    };
    view = await mount(<LinkDeviceDialog onClose={() => undefined} />);
    await until(() => !!document.querySelector('textarea[name="linkCode"]'));
    await typeInto(document.querySelector('textarea[name="linkCode"]') as HTMLTextAreaElement, CODE_TEXT);
    await submit(document.querySelector("dialog form") as HTMLFormElement);
    await until(() => body().includes("No device is waiting"));
    expect(digits()).toBeNull();
  });
});

/**
 * happy-dom tests of the board's "Key backup" dialog: opened from the channel list's menu; its status;
 * create with the key this page can export or else one the user gives (text), under a passphrase or a
 * recovery code; replace; delete after asking.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { generateIdentity, PrivateKeyCheckText } from "../../../core/crypto/index.ts";
import { BackupText } from "../../../web/features/auth/BackupSecretFields.tsx";
import { Board } from "../../../web/features/chat/Board.tsx";
import { KeyBackupDialog, KeyBackupText as T } from "../../../web/features/keys/KeyBackupDialog.tsx";
import { authUi } from "../../../web/state/auth.ts";
import { engineState } from "../../../web/state/engine.ts";
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
let closed = 0;
const PASS = "lantern orbit meadow staple 42";

beforeEach(() => {
  resetState();
  fake = installFakeClient();
  closed = 0;
  authUi.keyBackupOpen = false;
});
afterEach(async () => {
  await view?.unmount();
  view = undefined;
  document.body.innerHTML = "";
  authUi.keyBackupOpen = false;
});

const text = () => document.body.textContent ?? "";
const button = (name: string) =>
  ([...document.querySelectorAll("button")] as HTMLButtonElement[]).find((b) => b.textContent === name) ??
  null;
const input = (name: string) => document.querySelector<HTMLInputElement>(`input[name="${name}"]`);
const status = () => document.querySelector('[data-testid="key-backup-status"]')?.textContent ?? "";
const alert = () => document.querySelector('[role="alert"]')?.textContent ?? null;

async function open() {
  view = await mount(<KeyBackupDialog onClose={() => closed++} />);
  await settle(10);
}

async function passphrase(value = PASS) {
  await typeInto(input("backupPassphrase") as HTMLInputElement, value);
  await typeInto(input("backupPassphraseRepeat") as HTMLInputElement, value);
}

test("the channel list's menu opens it on the board; Close closes it", async () => {
  fake.impl.keyBackupStatus = async () => null;
  view = await mount(<Board />);
  await settle(20);
  const entry = button("◈ key backup");
  expect(entry?.getAttribute("aria-haspopup")).toBe("dialog");
  await click(entry);
  await until(() => status() === T.none);
  const dialog = document.querySelector('[role="dialog"]');
  expect(dialog?.getAttribute("aria-labelledby")).toBe("key-backup-title");
  expect(document.getElementById("key-backup-title")?.textContent).toBe(T.title);
  expect(status()).toBe(T.none);
  await click(button(T.close));
  expect(authUi.keyBackupOpen).toBe(false);
  expect(document.querySelector('[role="dialog"]')).toBeNull();
});

describe("create", () => {
  test("with a key this page can export: straight to the secret, then saved under a passphrase", async () => {
    fake.impl.keyBackupStatus = async () => null;
    fake.impl.exportPrivateKey = async () => "EXPORTED-KEY";
    fake.impl.saveKeyBackup = async () => ({ updatedAt: Date.UTC(2026, 2, 3) });
    await open();
    expect(button(T.replace)).toBeNull();
    expect(button(T.delete)).toBeNull();
    await click(button(T.create));
    await settle(10);
    expect(text()).toContain(T.keyReady);
    expect(document.querySelector("textarea")).toBeNull();
    await passphrase("too short");
    await click(button(T.save));
    expect(alert()).toContain("at least 12 characters");
    expect(callsOf(fake, "saveKeyBackup")).toHaveLength(0);
    await passphrase();
    await submit(document.querySelector("form") as HTMLFormElement);
    await settle(10);
    expect(callsOf(fake, "saveKeyBackup")[0]?.args).toEqual([
      { kind: "passphrase", secret: PASS, privateKey: "EXPORTED-KEY" },
    ]);
    expect(text()).toContain(T.saved);
    expect(status()).toContain("sealed with a recovery passphrase");
    expect(button(T.replace)).not.toBeNull();
  });

  test("a key this page cannot export: asks for it (checked against the account), then a recovery code", async () => {
    const mine = await generateIdentity();
    const other = await generateIdentity();
    if (engineState.auth.user) engineState.auth.user.publicKey = mine.publicKey;
    fake.impl.keyBackupStatus = async () => null;
    fake.impl.exportPrivateKey = async () => null;
    fake.impl.saveKeyBackup = async () => ({ updatedAt: 5 });
    await open();
    await click(button(T.create));
    await settle(10);
    expect(text()).toContain(T.needKey);
    const tabs = [...document.querySelectorAll('[role="tab"]')].map((t) => t.textContent);
    expect(tabs).toEqual([T.textTab, T.imageTab]);
    const area = document.querySelector("textarea") as HTMLTextAreaElement;
    const form = () => document.querySelector("form") as HTMLFormElement;
    await submit(form());
    expect(alert()).toBe("Please enter Private Key");
    await typeInto(area, other.privateKey);
    await submit(form());
    await until(() => alert() !== null);
    expect(alert()).toBe(PrivateKeyCheckText.notThisAccount);
    // The whole keys file is fine.
    await typeInto(area, `Public Key:\n${mine.publicKey}\n\nPrivate Key:\n${mine.privateKey}\n`);
    await submit(form());
    await until(() => text().includes(T.keyReady));
    await click(document.querySelectorAll<HTMLInputElement>('input[type="radio"]')[1] ?? null);
    const code = input("recoveryCode")?.value ?? "";
    expect(code).toHaveLength(29);
    expect(text()).toContain(BackupText.codeWarning);
    await click(button(T.save));
    await settle(10);
    expect(callsOf(fake, "saveKeyBackup")[0]?.args).toEqual([
      { kind: "recovery-code", secret: code, privateKey: mine.privateKey },
    ]);
    expect(status()).toContain("sealed with a recovery code");
    // Shown once: the code is gone from the dialog.
    expect(text()).not.toContain(code);
  });

  test("the engine's refusal is shown, and the secret step stays", async () => {
    fake.impl.keyBackupStatus = async () => null;
    fake.impl.exportPrivateKey = async () => "EXPORTED-KEY";
    fake.impl.saveKeyBackup = async () => {
      throw new Error("The recovery passphrase must not be your login password");
    };
    await open();
    await click(button(T.create));
    await settle(10);
    await passphrase();
    await click(button(T.save));
    await settle(10);
    expect(alert()).toBe("The recovery passphrase must not be your login password");
    expect(input("backupPassphrase")).not.toBeNull();
    await click(button(T.cancel));
    expect(status()).toBe(T.none);
  });
});

test("replace and delete (asked first) when a backup exists", async () => {
  fake.impl.keyBackupStatus = async () => ({ kind: "recovery-code", updatedAt: Date.UTC(2026, 0, 1) });
  fake.impl.exportPrivateKey = async () => "EXPORTED-KEY";
  fake.impl.deleteKeyBackup = async () => undefined;
  await open();
  expect(status()).toContain("sealed with a recovery code");
  expect(button(T.create)).toBeNull();
  await click(button(T.replace));
  await settle(10);
  expect(input("backupPassphrase")).not.toBeNull();
  await click(button(T.cancel));
  await click(button(T.delete));
  expect(text()).toContain(T.confirmDelete);
  expect(callsOf(fake, "deleteKeyBackup")).toHaveLength(0);
  await click(button(T.cancel));
  expect(status()).toContain("sealed with a recovery code");
  await click(button(T.delete));
  await click(button(T.yesDelete));
  await settle(10);
  expect(callsOf(fake, "deleteKeyBackup")).toHaveLength(1);
  expect(status()).toBe(T.none);
  expect(text()).toContain(T.deleted);
  await click(button(T.close));
  expect(closed).toBe(1);
});

test("a status the server cannot give is said, and creating is still offered", async () => {
  fake.impl.keyBackupStatus = async () => {
    throw new Error("offline");
  };
  await open();
  expect(status()).toBe(`${T.statusFailed}: offline`);
  expect(button(T.create)).not.toBeNull();
});

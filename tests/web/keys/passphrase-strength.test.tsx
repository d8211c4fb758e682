/**
 * happy-dom tests of the backup passphrase's strength check in the web forms (the board's "Key
 * backup" dialog and the keys modal): a live meter with the estimated offline time to crack, the
 * offline cost per guess stated, weak passphrases refused with the reason before anything is sent,
 * strong ones and generated recovery codes accepted.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { PassphraseStrengthText } from "../../../core/client/account/passphrase-policy.ts";
import { BackupText } from "../../../web/features/auth/BackupSecretFields.tsx";
import { KeysModal } from "../../../web/features/auth/KeysModal.tsx";
import { KeyBackupDialog, KeyBackupText as T } from "../../../web/features/keys/KeyBackupDialog.tsx";
import { authUi } from "../../../web/state/auth.ts";
import {
  callsOf,
  click,
  type FakeClient,
  installFakeClient,
  type Mounted,
  mount,
  resetState,
  settle,
  typeInto,
  until,
} from "../harness.ts";

let view: Mounted | undefined;
let fake: FakeClient;
const STRONG = "quiet violin harbor pepper glide";
const WEAK = "iloveyou2024!!";

beforeEach(() => {
  resetState();
  fake = installFakeClient();
  fake.impl.keyBackupStatus = async () => null;
  fake.impl.exportPrivateKey = async () => "EXPORTED-KEY";
  fake.impl.saveKeyBackup = async () => ({ updatedAt: Date.UTC(2026, 10, 26) });
  fake.impl.completeRegistration = async () => undefined;
});
afterEach(async () => {
  await view?.unmount();
  view = undefined;
  document.body.innerHTML = "";
  Object.assign(authUi, { pendingKeys: null, showKeysModal: false, keyBackupOpen: false });
});

const text = () => document.body.textContent ?? "";
const button = (name: string) =>
  ([...document.querySelectorAll("button")] as HTMLButtonElement[]).find((b) => b.textContent === name) ??
  null;
const input = (name: string) => document.querySelector<HTMLInputElement>(`input[name="${name}"]`);
const alert = () => document.querySelector('[role="alert"]')?.textContent ?? null;
const meter = () => document.querySelector<HTMLElement>('[data-testid="passphrase-strength"]');
const meterLine = () => meter()?.querySelector("p")?.textContent ?? "";

async function type(value: string, repeat = value) {
  await typeInto(input("backupPassphrase") as HTMLInputElement, value);
  await typeInto(input("backupPassphraseRepeat") as HTMLInputElement, repeat);
}

/** The board's dialog, at the secret step (the key exported by this page). */
async function openDialog() {
  view = await mount(<KeyBackupDialog onClose={() => undefined} />);
  await settle(10);
  await click(button(T.create));
  await until(() => input("backupPassphrase") !== null);
}

describe("the Key backup dialog", () => {
  test("states the offline cost per guess and the rule next to the field", async () => {
    await openDialog();
    expect(text()).toContain(PassphraseStrengthText.offlineCost);
    expect(text()).toContain(PassphraseStrengthText.rule);
    expect(text()).toContain("Each guess costs Argon2id with 64 MiB and 4 passes");
    // Nothing typed: an empty meter.
    expect(meter()?.dataset.ok).toBe("");
    expect(meterLine()).toBe("");
    const field = input("backupPassphrase");
    expect(field?.getAttribute("aria-describedby")?.split(" ")).toContain(meter()?.querySelector("p")?.id);
  });

  test("the meter follows the typing: a weak passphrase's crack time and advice, then a strong one's", async () => {
    await openDialog();
    await typeInto(input("backupPassphrase") as HTMLInputElement, WEAK);
    await until(() => meter()?.dataset.ok === "false", 3000);
    expect(meterLine()).toMatch(
      /^Too easy to guess: one GPU would find it offline in \d+ (hours|minutes|seconds)\./,
    );
    expect(meterLine()).toContain("recovery code");
    expect(meter()?.querySelector("p")?.className).toBe("warning");
    expect(Number(meter()?.querySelector("meter")?.getAttribute("value"))).toBeLessThan(14);

    await typeInto(input("backupPassphrase") as HTMLInputElement, STRONG);
    await until(() => meter()?.dataset.ok === "true", 3000);
    expect(meterLine()).toMatch(/^Strong enough: one GPU would need .+ to guess it offline\.$/);
    expect(meter()?.querySelector("p")?.className).toBe("hint");
    expect(Number(meter()?.querySelector("meter")?.getAttribute("value"))).toBe(14);
  });

  test("a weak passphrase (long enough, typed twice) is refused with the reason; nothing is sent", async () => {
    await openDialog();
    for (const weak of [WEAK, "correct horse battery staple", "password123456", "neo.wsync.local!!"]) {
      await type(weak);
      await click(button(T.save));
      await until(() => alert() !== null, 3000);
      expect({
        weak,
        alert: alert()?.startsWith(
          "The recovery passphrase is too easy to guess: one GPU would find it offline in",
        ),
      }).toEqual({
        weak,
        alert: true,
      });
      expect(alert()).toContain(PassphraseStrengthText.rule);
    }
    expect(callsOf(fake, "saveKeyBackup")).toHaveLength(0);
    // The form stays, with what was typed.
    expect(input("backupPassphrase")?.value).toBe("neo.wsync.local!!");
  });

  test("a strong passphrase is saved", async () => {
    await openDialog();
    await type(STRONG);
    await click(button(T.save));
    await until(() => text().includes(T.saved), 3000);
    expect(callsOf(fake, "saveKeyBackup")[0]?.args).toEqual([
      { kind: "passphrase", secret: STRONG, privateKey: "EXPORTED-KEY" },
    ]);
  });

  test("a generated recovery code needs no estimate and is saved", async () => {
    await openDialog();
    await click(document.querySelectorAll<HTMLInputElement>('input[type="radio"]')[1] ?? null);
    expect(meter()).toBeNull();
    const code = input("recoveryCode")?.value ?? "";
    await click(button(T.save));
    await until(() => text().includes(T.saved), 3000);
    expect(callsOf(fake, "saveKeyBackup")[0]?.args).toEqual([
      { kind: "recovery-code", secret: code, privateKey: "EXPORTED-KEY" },
    ]);
  });
});

describe("the keys modal at registration", () => {
  beforeEach(() => {
    authUi.pendingKeys = { publicKey: "BPUBLIC-KEY", privateKey: "PRIVATE-KEY-PKCS8" };
    authUi.showKeysModal = true;
  });

  test("refuses a weak passphrase before publishing anything; a strong one goes to completeRegistration", async () => {
    let saved = 0;
    view = await mount(<KeysModal onSaved={() => saved++} />);
    // The backup is on by default at registration (issue 28).
    expect(input("backupOptIn")?.checked).toBe(true);
    expect(text()).toContain(PassphraseStrengthText.offlineCost);
    await type("Summer2024Summer");
    await click(button("I've Saved My Keys"));
    await until(() => alert() !== null, 3000);
    expect(alert()).toStartWith(
      "The recovery passphrase is too easy to guess: one GPU would find it offline in",
    );
    expect(callsOf(fake, "completeRegistration")).toHaveLength(0);
    expect(saved).toBe(0);

    await type(STRONG);
    await until(() => alert() === null);
    await click(button("I've Saved My Keys"));
    await until(() => saved === 1, 3000);
    expect(callsOf(fake, "completeRegistration")[0]?.args).toEqual([{ kind: "passphrase", secret: STRONG }]);
  });

  test("the length rule still comes first, in its own words", async () => {
    view = await mount(<KeysModal onSaved={() => undefined} />);
    await type("short");
    await click(button("I've Saved My Keys"));
    expect(alert()).toBe("The recovery passphrase must be at least 12 characters");
    expect(text()).toContain(BackupText.passphraseHint);
  });
});

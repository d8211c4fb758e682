/**
 * Key custody in the terminal: the encrypted key backup (store, restore, delete), the choices a
 * device without the key gets at login, confirming a new account's keys, and the rule that nothing
 * destroys a private key silently (logout, `keys new`): say what is lost, offer an export, ask on a
 * terminal, refuse without one unless `--yes`.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { PassphraseStrengthText } from "../core/client/account/passphrase-policy.ts";
import type { StrengthInputs } from "../core/client/account/passphrase-strength.ts";
import { readJson, StoreKeys, type WsyncClient } from "../core/client/index.ts";
import { trustDate } from "../core/client/keys/trust.ts";
import { checkPrivateKey, fingerprint, importIdentity, keysFileText } from "../core/crypto/index.ts";
import {
  type BackupSecretKind,
  checkPassphrase,
  KeyBackupError,
  KeyBackupText,
  newRecoveryCode,
  PASSPHRASE_MIN_LENGTH,
} from "../core/crypto/key-backup.ts";
import { CliError, describeError, ExitCode, usageError } from "./errors.ts";
import { type FileStore, writeSecretFile } from "./file-store.ts";
import { time } from "./format.ts";
import { isPngFile, readKeyPng, writeKeyPng } from "./png.ts";
import { ask, askBlock, choose, confirm, interactive, io, stdinLine } from "./prompt.ts";

export type BackupStatus = { kind: BackupSecretKind; updatedAt: number } | null;
/** A backup's status, or "unknown" when the server could not be asked. */
export type BackupInfo = BackupStatus | "unknown";

// ---- copies of the key the user made from this device --------------------------------------------

/** The CLI's note that this key was exported (or imported from a copy the user holds). */
const KEY_COPY = "wsync-cli-key-copy";

interface KeyCopy {
  publicKey: string;
  how: "export" | "import";
  at: number;
}

export async function noteKeyCopy(store: FileStore, privateKey: string, how: KeyCopy["how"]): Promise<void> {
  const { publicKey } = await importIdentity(privateKey);
  await store.set(KEY_COPY, JSON.stringify({ publicKey, how, at: Date.now() } satisfies KeyCopy));
}

export async function keyCopyOf(store: FileStore, publicKey: string | null): Promise<KeyCopy | null> {
  const copy = await readJson<KeyCopy>(store, KEY_COPY);
  return publicKey && copy?.publicKey === publicKey ? copy : null;
}

export async function forgetKeyCopy(store: FileStore): Promise<void> {
  await store.delete(KEY_COPY);
}

export interface ExportTargets {
  /** The keys as text (the wsync-keys.txt format). */
  export?: string;
  /** The private key as a Shadow Cipher PNG. */
  exportQr?: string;
}

/** Writes this device's private key to the given files (mode 0600, atomically). */
export async function exportKey(client: WsyncClient, store: FileStore, to: ExportTargets): Promise<void> {
  const privateKey = await client.exportPrivateKey();
  if (!privateKey) throw new CliError("No private key on this device to export", ExitCode.auth);
  const { publicKey } = await importIdentity(privateKey);
  if (to.export) {
    writeSecretFile(to.export, keysFileText({ publicKey, privateKey }));
    io.err(`Wrote ${to.export} (your keys as text, mode 0600). Anyone with it can read your messages.\n`);
  }
  if (to.exportQr) {
    writeKeyPng(to.exportQr, privateKey);
    io.err(`Wrote ${to.exportQr} (your private key as a Shadow Cipher picture, mode 0600).\n`);
  }
  await noteKeyCopy(store, privateKey, "export");
}

// ---- what this device holds, and what destroying it loses ---------------------------------------

export interface DeviceKeys {
  privateKey: string | null;
  publicKey: string | null;
  fingerprint: string | null;
  /** Channels with epoch keys stored on this device. */
  channels: number;
}

export async function deviceKeys(client: WsyncClient, store: FileStore): Promise<DeviceKeys> {
  const privateKey = await client.exportPrivateKey().catch(() => null);
  let publicKey: string | null = null;
  if (privateKey) {
    try {
      publicKey = (await importIdentity(privateKey)).publicKey;
    } catch {
      publicKey = null;
    }
  }
  const channels = ((await readJson<string[]>(store, StoreKeys.epochIndex)) ?? []).length;
  return { privateKey, publicKey, fingerprint: publicKey ? await fingerprint(publicKey) : null, channels };
}

export async function backupInfo(client: WsyncClient, signedIn: boolean): Promise<BackupInfo> {
  if (!signedIn) return "unknown";
  try {
    return await client.keyBackupStatus();
  } catch {
    return "unknown";
  }
}

const kindWords = (kind: BackupSecretKind) =>
  kind === "recovery-code" ? "sealed under a recovery code" : "sealed under a passphrase";

export function backupStatusLine(b: BackupInfo): string {
  if (b === "unknown") return "Could not check whether the server holds a key backup of this account.";
  if (!b) return "There is no key backup of this account on the server.";
  return `The server holds a key backup of this account (${kindWords(b.kind)}, stored ${time(new Date(b.updatedAt).toISOString())}).`;
}

/** The warning for a key that may exist nowhere else, or where the user's copy is. */
function onlyCopyLines(keys: DeviceKeys, backup: BackupInfo, copy: KeyCopy | null): string[] {
  if (!keys.privateKey) return [];
  if (copy) {
    const when = time(new Date(copy.at).toISOString());
    return [
      copy.how === "export"
        ? `You exported this key from this device on ${when}: keep that copy.`
        : `This key was imported on ${when} from a copy you hold: keep that copy.`,
    ];
  }
  if (backup && backup !== "unknown") return [];
  return [
    `WARNING: ${backup === "unknown" ? "unless the server holds a key backup, " : ""}this key was never exported from this device: if this is its only copy, it is gone for good, and with it everything sent to you before.`,
  ];
}

/** What `wsync logout` removes. */
export function logoutLossText(keys: DeviceKeys, backup: BackupInfo, copy: KeyCopy | null): string {
  const lines = ["Signing out removes from this device:"];
  if (keys.privateKey) lines.push(`  - your private key (fingerprint ${keys.fingerprint})`);
  if (keys.channels > 0) {
    lines.push(
      `  - the channel keys it unwrapped (${keys.channels} channel${keys.channels === 1 ? "" : "s"}; fetched again once your private key is back)`,
    );
  }
  lines.push(backupStatusLine(backup));
  if (backup && backup !== "unknown")
    lines.push("`wsync keys restore` brings the key back after `wsync login`.");
  lines.push(...onlyCopyLines(keys, backup, copy));
  return `${lines.join("\n")}\n`;
}

/** What `wsync keys new` (or "I lost my key") does, said before it is done. */
export function newKeysText(keys: DeviceKeys, backup: BackupInfo, copy: KeyCopy | null): string {
  const lines = [
    "Making new keys replaces your key pair, for good:",
    "  - every channel you are in is told your key changed (members see it), and rotates to a new channel key",
    keys.channels > 0
      ? "  - messages sent to you before cannot be opened with the new key: history from before is gone, except what the channel keys already on this device still open here"
      : "  - messages sent to you before cannot be opened with the new key: history from before is gone",
  ];
  if (keys.privateKey)
    lines.push(`  - the private key on this device (fingerprint ${keys.fingerprint}) is replaced`);
  if (backup && backup !== "unknown")
    lines.push("  - your key backup on the server holds the old key and is deleted");
  lines.push(...onlyCopyLines(keys, backup, copy));
  return `${lines.join("\n")}\n`;
}

export interface DestroyOptions extends ExportTargets {
  yes?: boolean;
}

/**
 * The gate in front of anything that destroys a key. Without a terminal and without `--yes` it
 * refuses (exit 2) before writing or removing anything; otherwise it writes the requested exports,
 * offers one on a terminal, and asks. Declining is exit 1 with nothing changed.
 */
export async function confirmDestroy(
  client: WsyncClient,
  store: FileStore,
  o: DestroyOptions,
  what: { refusal: string; question: string; hasKey: boolean },
): Promise<void> {
  if (!o.yes && !interactive()) throw usageError(what.refusal);
  if (what.hasKey && (o.export || o.exportQr)) await exportKey(client, store, o);
  if (o.yes) return;
  if (what.hasKey && !o.export && !o.exportQr) {
    const path = (
      await ask(
        "Export your private key first? A file to write (FILE.png for a Shadow Cipher picture, anything else for text), or Enter to skip: ",
      )
    ).trim();
    if (path) {
      const file = expandHome(path);
      await exportKey(client, store, /\.png$/i.test(file) ? { exportQr: file } : { export: file });
    }
  }
  if (!(await confirm(what.question))) throw new CliError("Cancelled: nothing was changed", ExitCode.other);
}

// ---- secrets: passphrases and recovery codes ----------------------------------------------------

/**
 * A backup secret given without a terminal: from `--passphrase-file` (one trailing newline dropped),
 * else from standard input when it is not a terminal. Null: ask on the terminal.
 */
export async function givenSecret(file: string | undefined, what: string): Promise<string | null> {
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw usageError(`Cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    text = text.replace(/\r?\n$/, "");
    if (!text) throw usageError(`--passphrase-file: ${file} is empty`);
    return text;
  }
  if (!io.stdinIsTTY()) {
    const text = await stdinLine();
    if (!text) throw usageError(`No ${what} given: standard input was empty (or use --passphrase-file FILE)`);
    return text;
  }
  return null;
}

/** The account's names, which a backup passphrase must not lean on. */
export const strengthInputsOf = (client: WsyncClient): StrengthInputs => ({
  handle: client.state.auth.user?.handle,
  email: client.state.auth.user?.email,
});

/**
 * A new recovery passphrase, asked twice without echo. One too easy to guess offline is refused at
 * once with the reason (core/client/account/passphrase-strength.ts, loaded only here: its word lists stay out
 * of every other command's start).
 */
export async function askNewPassphrase(loginPassword?: string, who: StrengthInputs = {}): Promise<string> {
  io.err(
    `Choose a recovery passphrase: at least ${PASSPHRASE_MIN_LENGTH} characters, not your login password. It never leaves this device; without it the backup cannot be opened.\n${PassphraseStrengthText.offlineCost} ${PassphraseStrengthText.rule}\n`,
  );
  const first = await ask("Passphrase: ", { secret: true });
  checkPassphrase(first, loginPassword);
  const { checkPassphraseStrength } = await import("../core/client/account/passphrase-strength.ts");
  const strength = checkPassphraseStrength(first, { ...who, loginPassword });
  io.err(`${strength.feedback}\n`);
  const again = await ask("Passphrase again: ", { secret: true });
  if (again !== first) throw usageError("The passphrases do not match");
  return first;
}

/** Prints a new recovery code once: the code on stdout, the warning on stderr. */
export async function showRecoveryCode(code: string): Promise<void> {
  io.err(
    "Your recovery code is below. Write it down now and keep it away from this device: it is shown only this once, it is the only way to open the backup, and anyone who has it and can sign in as you can read your messages.\n",
  );
  io.out(`${code}\n`);
  if (interactive()) await ask("Press Enter once you have written it down: ");
}

export interface BackupChoice {
  kind: BackupSecretKind;
  secret: string;
}

/**
 * The terminal menu for keeping a copy of a key: a backup under a passphrase or a recovery code,
 * optionally showing the key to copy it, or none. Returns the backup to make, or null.
 */
export async function chooseBackup(o: {
  loginPassword?: string;
  /** The account's names, for the passphrase's strength check. */
  who?: StrengthInputs;
  privateKey?: string | null;
  noneLabel: string;
}): Promise<BackupChoice | null> {
  const show = Boolean(o.privateKey);
  const none = show ? "4" : "3";
  for (;;) {
    io.err(
      [
        "  1) Back it up on the server, sealed under a passphrase you choose",
        "  2) Back it up on the server, sealed under a recovery code made for you",
        ...(show ? ["  3) Show the private key (to copy it somewhere safe)"] : []),
        `  ${none}) ${o.noneLabel}`,
        "",
      ].join("\n"),
    );
    const choice = await choose(`Choice [1-${none}]: `, show ? ["1", "2", "3", "4"] : ["1", "2", "3"]);
    if (choice === "1") {
      try {
        return { kind: "passphrase", secret: await askNewPassphrase(o.loginPassword, o.who) };
      } catch (e) {
        io.err(`${describeError(e).message}\n`);
        continue;
      }
    }
    if (choice === "2") return { kind: "recovery-code", secret: newRecoveryCode() };
    if (show && choice === "3") {
      io.err(`\nPrivate Key:\n${o.privateKey}\n\n`);
      continue;
    }
    return null;
  }
}

/** After a backup was stored: the recovery code once, and a line saying it is done. */
export async function backupStored(b: BackupChoice): Promise<void> {
  if (b.kind === "recovery-code") await showRecoveryCode(b.secret);
  io.err(`Key backup stored on the server (${kindWords(b.kind)}).\n`);
}

// ---- restoring: from the backup, or from a key the user gives ------------------------------------

/** The passphrase or code asked on the terminal, up to three times. True once restored. */
export async function restoreOnTerminal(client: WsyncClient, backup: BackupInfo): Promise<boolean> {
  if (backup === null) {
    io.err("There is no key backup of this account on the server.\n");
    return false;
  }
  const label =
    backup === "unknown"
      ? "Passphrase or recovery code: "
      : backup.kind === "recovery-code"
        ? "Recovery code: "
        : "Passphrase: ";
  for (let attempt = 0; attempt < 3; attempt++) {
    const secret = await ask(label, { secret: true });
    if (!secret) return false;
    io.err("Opening the backup…\n");
    try {
      await client.restoreFromBackup(secret);
      io.out("Private key restored from the key backup\n");
      await sayTrustOrigin(client);
      return true;
    } catch (e) {
      if (e instanceof KeyBackupError && (e.code === "wrong-secret" || e.code === "weak-secret")) {
        io.err(`${e.message}\n`);
        continue;
      }
      throw e;
    }
  }
  throw new CliError(KeyBackupText.wrongSecret, ExitCode.auth);
}

function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? `${homedir()}${path.slice(1)}` : path;
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The key in a file: a Shadow Cipher PNG, or text (the key alone, or a whole wsync-keys.txt). */
export function readKeyFile(path: string): string {
  if (!isFile(path)) throw usageError(`Cannot read ${path}: not a file`);
  if (isPngFile(path)) return readKeyPng(path);
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw usageError(`Cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** What the person typed or pasted: a key file or PNG path (read), else the key text itself. */
export function keyFromInput(text: string): string {
  const t = text.trim();
  if (!t.includes("\n") && isFile(expandHome(t))) return readKeyFile(expandHome(t));
  return text;
}

/**
 * When pasted input is complete: a path on the first line, a whole key (the key alone, broken over
 * lines, or a whole wsync-keys.txt), or an empty line (except the one inside wsync-keys.txt).
 */
export async function keyInputDone(text: string, line: string): Promise<boolean> {
  if (text === line && line.trim() && isFile(expandHome(line.trim()))) return true;
  if (line.trim() === "") {
    if (!text.trim()) return true;
    return !(/public\s*key\s*:/i.test(text) && !/private\s*key\s*:/i.test(text));
  }
  try {
    await checkPrivateKey(text);
    return true;
  } catch {
    return false;
  }
}

/** Option 2 at login: the key pasted, or read from a file or Shadow Cipher PNG. */
async function pasteKey(client: WsyncClient, store: FileStore): Promise<boolean> {
  const text = await askBlock(
    "Paste your private key (or the whole wsync-keys.txt), or type the path of a key file or Shadow Cipher PNG, then Enter (input is hidden):\n",
    keyInputDone,
  );
  if (!text.trim()) return false;
  const key = keyFromInput(text);
  await client.validatePrivateKey(key);
  const privateKey = await client.exportPrivateKey();
  if (privateKey) await noteKeyCopy(store, privateKey, "import");
  io.out("Private key restored\n");
  return true;
}

/** Option 3 at login: new keys, after saying plainly what that costs. */
async function newKeysOnTerminal(
  client: WsyncClient,
  store: FileStore,
  backup: BackupInfo,
): Promise<boolean> {
  const keys = await deviceKeys(client, store);
  io.err(newKeysText(keys, backup, await keyCopyOf(store, keys.publicKey)));
  if (!(await confirm("Make new keys?"))) return false;
  await client.createNewKeys();
  io.out("New keys saved\n");
  await offerBackup(client);
  return true;
}

/** On a terminal, after new keys: offer a backup (the key exists only on this device now). */
export async function offerBackup(client: WsyncClient): Promise<void> {
  io.err("Your private key exists only on this device. Keep a copy:\n");
  const choice = await chooseBackup({
    who: strengthInputsOf(client),
    privateKey: await client.exportPrivateKey(),
    noneLabel: "Not now (later: `wsync keys backup`, or `wsync keys export --qr key.png`)",
  });
  if (!choice) return;
  await client.saveKeyBackup(choice);
  await backupStored(choice);
}

export const NO_KEY_HELP = [
  "This device has no private key for your account. To use it here, run one of:",
  "  wsync keys restore         from your key backup (passphrase or recovery code)",
  "  wsync keys import --text   paste the key (or --file wsync-keys.txt, or --qr FILE.png)",
  "  wsync device link          from a device where you are signed in (there: wsync device add CODE)",
  "  wsync keys new --yes       if the key is lost: new keys (history from before is gone, and every channel is told your key changed)",
  "",
].join("\n");

/**
 * `wsync login` on a terminal, for a device without the account's key: restore from the backup,
 * give the key, or make new keys; "not now" leaves it as it is.
 */
export async function keyMenu(client: WsyncClient, store: FileStore): Promise<void> {
  const backup = await backupInfo(client, true);
  io.err("This device does not have your private key, so it cannot read or send messages yet.\n");
  const first =
    backup === null
      ? "(there is no backup on the server)"
      : backup === "unknown"
        ? "(passphrase or recovery code)"
        : `(${kindWords(backup.kind)}, stored ${time(new Date(backup.updatedAt).toISOString())})`;
  for (;;) {
    io.err(
      [
        `  1) Restore it from your key backup ${first}`,
        "  2) Paste the private key, or give the path of your key file (wsync-keys.txt) or Shadow Cipher PNG",
        "  3) I lost my key: make new keys",
        "  4) Not now",
        "",
      ].join("\n"),
    );
    const choice = await choose("Choice [1-4]: ", ["1", "2", "3", "4"]);
    try {
      if (choice === "1" && (await restoreOnTerminal(client, backup))) return;
      if (choice === "2" && (await pasteKey(client, store))) return;
      if (choice === "3" && (await newKeysOnTerminal(client, store, backup))) return;
      if (choice === "4") {
        io.err(NO_KEY_HELP);
        return;
      }
    } catch (e) {
      const { message, code } = describeError(e);
      if (code === ExitCode.network) throw e;
      io.err(`${message}\n`);
    }
  }
}

// ---- a new account's keys -----------------------------------------------------------------------

/**
 * Confirms the keys of a registration (just made by `register`, or left unconfirmed by one that
 * stopped): on a terminal it shows them and offers a backup before publishing the public key;
 * without one it publishes them at once, as `register` always has (the key is in the 0600 file).
 */
export async function confirmKeys(
  client: WsyncClient,
  store: FileStore,
  o: { loginPassword?: string; resumed: boolean },
): Promise<void> {
  const keys = client.unconfirmedKeys;
  if (!keys) throw new Error("No keys to confirm");
  if (!interactive()) {
    await client.completeRegistration();
    io.err(
      `Your private key is stored in ${store.path}.\nBack it up: \`wsync keys backup\` (encrypted, on the server), \`wsync keys export\` (text) or \`wsync keys export --qr key.png\`.\n`,
    );
    return;
  }
  io.err(
    [
      o.resumed
        ? "Your registration was not finished: these keys were made on this device and never confirmed."
        : "Your keys were made on this device:",
      `  public key   ${keys.publicKey}`,
      `  fingerprint  ${await fingerprint(keys.publicKey)}`,
      `  private key  in ${store.path} (readable only by you)`,
      "Without the private key nobody, not even the server, can decrypt your messages. Keep a copy:",
      "",
    ].join("\n"),
  );
  const choice = await chooseBackup({
    loginPassword: o.loginPassword,
    who: strengthInputsOf(client),
    privateKey: keys.privateKey,
    noneLabel: "I have saved my keys: no backup now (`wsync keys export --qr key.png` writes a copy)",
  });
  await client.completeRegistration(choice ?? undefined);
  if (choice) await backupStored(choice);
  if (o.resumed) io.err("Registration finished: your public key is now on the server.\n");
}

/**
 * Protocol §8: where this device's trust now comes from. A backup carries the trust state of the
 * device that saved it (its date is said); without it, channels read "verified from the server's word".
 */
export async function sayTrustOrigin(client: WsyncClient): Promise<void> {
  const origin = await client.trustOrigin();
  if (origin.source === "backup")
    io.err(`Trust state (verified channels, pinned keys) from your backup of ${trustDate(origin.since)}\n`);
  else if (origin.source === "server")
    io.err(
      "No trust state came with it: each channel reads “verified from the server's word” until another member confirms it (link this device from another one to carry its trust over: `wsync device link`)\n",
    );
}

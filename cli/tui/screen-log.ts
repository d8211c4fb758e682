import { appendFileSync, chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import type { KeyValueStore } from "../../core/client/index.ts";

/** Where the setting is remembered: the device's store, so every screen of this device agrees. */
export const SCREEN_LOGS_KEY = "wsync-cli-screen-logs";

/**
 * Logs of what the screen showed, as irssi's autolog keeps them (docs/decisions/cli-screen-logs.md):
 * off until `/log on` (remembered for this device), one file per channel plus `status.log`, lines as
 * `read` prints them. The folder is 0700 and each file 0600 (set on creation whatever the umask, and
 * tightened if an older file was looser). The text is the decrypted messages: plaintext on this disk.
 */
export class ScreenLogs {
  private on = false;

  constructor(
    readonly dir: string,
    private readonly store: Pick<KeyValueStore, "get" | "set">,
  ) {}

  async load(): Promise<boolean> {
    this.on = (await this.store.get(SCREEN_LOGS_KEY)) === "on";
    return this.on;
  }

  get enabled(): boolean {
    return this.on;
  }

  async setEnabled(on: boolean): Promise<void> {
    this.on = on;
    await this.store.set(SCREEN_LOGS_KEY, on ? "on" : "off");
    if (on) this.ensureDir();
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
  }

  /** A file name for a channel: its name (letters, digits, `-`, `_` kept) and its id. */
  static fileFor(channel: { id: string; name: string } | null): string {
    if (!channel) return "status.log";
    return `${channel.name.replace(/[^\w-]/g, "_").slice(0, 40)}-${channel.id.replace(/[^\w-]/g, "_")}.log`;
  }

  /** Appends lines (nothing while off). */
  write(channel: { id: string; name: string } | null, lines: readonly string[]): void {
    if (!this.on || lines.length === 0) return;
    this.ensureDir();
    const path = join(this.dir, ScreenLogs.fileFor(channel));
    let fresh = false;
    try {
      statSync(path);
    } catch {
      fresh = true;
    }
    if (fresh) closeSync(openSync(path, "a", 0o600));
    if (fresh || (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    appendFileSync(path, lines.map((l) => `${l}\n`).join(""), { mode: 0o600 });
  }
}

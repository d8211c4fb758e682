/**
 * The CLI's files that hold secrets (the store, key exports): mode 0600 whatever the umask or the
 * old file's mode, and written atomically (temp file in the same directory, fsync, rename), so a
 * crash between the write and the rename leaves the old file intact.
 */
import { afterAll, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { FileStore, isTempFileOf, removeStaleTempFiles, writeFileAtomic } from "../../cli/file-store.ts";
import { writeKeyPng } from "../../cli/png.ts";
import { cleanupTempDirs, REPO_ROOT, tempDir } from "./cli-harness.ts";

afterAll(cleanupTempDirs);

const mode = (path: string) => statSync(path).mode & 0o777;
const tempFiles = (path: string) =>
  readdirSync(join(path, "..")).filter((n) => isTempFileOf(path, n) || n.endsWith(".tmp"));

/** A P-256 PKCS8 key (any valid one: the picture encodes bytes, it does not check the account). */
async function privateKey(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  return Buffer.from(await crypto.subtle.exportKey("pkcs8", pair.privateKey)).toString("base64");
}

test("a new file is 0600 even under a permissive umask; an existing 0644 file becomes 0600", () => {
  const dir = tempDir();
  const fresh = join(dir, "fresh.json");
  const old = process.umask(0);
  try {
    writeFileAtomic(fresh, "one");
  } finally {
    process.umask(old);
  }
  expect(mode(fresh)).toBe(0o600);
  expect(readFileSync(fresh, "utf8")).toBe("one");

  const loose = join(dir, "loose.txt");
  writeFileSync(loose, "old");
  chmodSync(loose, 0o644);
  writeFileAtomic(loose, "new");
  expect(mode(loose)).toBe(0o600);
  expect(readFileSync(loose, "utf8")).toBe("new");
  expect(tempFiles(loose)).toEqual([]);
});

test("a failure between the synced temp file and the rename leaves the old file and no temp file", () => {
  const dir = tempDir();
  const path = join(dir, "store.json");
  writeFileAtomic(path, "old contents");
  let seen: string | null = null;
  expect(() =>
    writeFileAtomic(path, "new contents", {
      beforeRename(tmp) {
        seen = tmp;
        // The temp file is complete, owner-only and next to the target (same filesystem: the
        // rename is atomic).
        expect(readFileSync(tmp, "utf8")).toBe("new contents");
        expect(mode(tmp)).toBe(0o600);
        expect(join(tmp, "..")).toBe(dir);
        throw new Error("disk gone");
      },
    }),
  ).toThrow("disk gone");
  expect(seen).not.toBeNull();
  expect(readFileSync(path, "utf8")).toBe("old contents");
  expect(existsSync(seen as unknown as string)).toBe(false);
});

test("a process killed between write and rename: the store still reads the old data; the stale temp is removed", async () => {
  const dir = tempDir();
  const path = join(dir, "wsync", "127.0.0.1_3000.json");
  const before = new FileStore(path);
  await before.set("privateKey", "OLD");
  // A real process dies (exit without unwinding) right before its rename.
  const script = `
    import { FileStore } from "./cli/file-store.ts";
    const s = new FileStore(${JSON.stringify(path)}, { beforeRename: () => process.exit(9) });
    await s.set("privateKey", "NEW");
  `;
  const proc = Bun.spawn([process.execPath, "-e", script], { cwd: REPO_ROOT, stderr: "pipe" });
  expect(await proc.exited).toBe(9);
  const left = readdirSync(join(path, "..")).filter((n) => isTempFileOf(path, n));
  expect(left).toHaveLength(1);
  const leftPath = join(path, "..", left[0] as string);
  expect(mode(leftPath)).toBe(0o600);
  expect(JSON.parse(readFileSync(leftPath, "utf8")).privateKey).toBe("NEW");

  // The file itself is whole and old: the next process reads it.
  expect(JSON.parse(readFileSync(path, "utf8")).privateKey).toBe("OLD");
  expect(await new FileStore(path).get("privateKey")).toBe("OLD");
  // A fresh temp file may belong to a writer still running: it stays until it is clearly stale.
  expect(existsSync(leftPath)).toBe(true);
  const old = new Date(Date.now() - 5 * 60_000);
  utimesSync(leftPath, old, old);
  removeStaleTempFiles(path);
  expect(existsSync(leftPath)).toBe(false);
});

test("the store tightens a loose file and directory; a key PNG export is 0600 and atomic", async () => {
  const dir = tempDir();
  const path = join(dir, "wsync", "h_1.json");
  const s = new FileStore(path);
  await s.set("a", "1");
  chmodSync(path, 0o644);
  chmodSync(join(path, ".."), 0o755);
  const again = new FileStore(path);
  expect(mode(path)).toBe(0o600);
  expect(mode(join(path, ".."))).toBe(0o700);
  expect(await again.get("a")).toBe("1");

  const png = join(dir, "key.png");
  writeFileSync(png, "not yet a picture");
  chmodSync(png, 0o644);
  const key = await privateKey();
  writeKeyPng(png, key);
  expect(mode(png)).toBe(0o600);
  expect(readFileSync(png).subarray(1, 4).toString()).toBe("PNG");
  expect(tempFiles(png)).toEqual([]);
  // A directory that does not exist is one clear error, and nothing is left behind.
  expect(() => writeKeyPng(join(dir, "missing", "key.png"), key)).toThrow("Cannot write");
  expect(existsSync(join(dir, "missing"))).toBe(false);
});

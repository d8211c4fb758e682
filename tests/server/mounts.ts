/**
 * Small filesystems for storage-fault tests: a tmpfs of a given size (to fill) and an ext4 image on a
 * loop device (to turn read-only under open files, which a tmpfs remount refuses with EBUSY). Both
 * need root; `unavailableReason()` says why they cannot be used so that tests skip saying so.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestMount {
  dir: string;
  /** Unmounts (lazily if busy) and removes the mount point; safe to call twice. */
  cleanup(): void;
}

const mounted = new Set<TestMount>();

function run(cmd: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 10_000 });
  return {
    ok: r.status === 0,
    out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}`.trim(),
  };
}

let probe: string | null | undefined;

/** Null when tmpfs mounts work here, else why not (printed by the skipping test). */
export function unavailableReason(): string | null {
  if (probe !== undefined) return probe;
  if (process.platform !== "linux") probe = `mounts need Linux (this is ${process.platform})`;
  else if (process.getuid?.() !== 0) probe = "mounting a tmpfs needs root";
  else {
    try {
      const m = mountTmpfs(64 * 1024);
      m.cleanup();
      probe = null;
    } catch (e) {
      probe = `mount -t tmpfs failed: ${(e as Error).message}`;
    }
  }
  return probe;
}

function track(dir: string, extra: () => void = () => undefined): TestMount {
  let done = false;
  const m: TestMount = {
    dir,
    cleanup() {
      if (done) return;
      done = true;
      mounted.delete(m);
      if (!run("umount", [dir]).ok) run("umount", ["-l", dir]);
      extra();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  mounted.add(m);
  return m;
}

/** A fresh tmpfs of `bytes` mounted on a new temp directory. */
export function mountTmpfs(bytes: number): TestMount {
  const dir = mkdtempSync(join(tmpdir(), "wsync-tmpfs-"));
  const r = run("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0700`, "tmpfs", dir]);
  if (!r.ok) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(r.out || "mount failed");
  }
  return track(dir);
}

/** Remounts a mount read-only or read-write (fails with EBUSY while files on it are open for writing). */
export function remount(m: TestMount, mode: "ro" | "rw"): void {
  const r = run("mount", ["-o", `remount,${mode}`, m.dir]);
  if (!r.ok) throw new Error(`remount ${mode} ${m.dir}: ${r.out}`);
}

/**
 * An ext4 image of `bytes` on a loop device, mounted with errors=remount-ro: `failReadOnly()` makes the
 * kernel record a filesystem error, which turns it read-only at once even under open files — what a
 * failing disk does. Throws when loop devices or ext4 are not available.
 */
export function mountExt4(bytes: number): TestMount & { failReadOnly(): void } {
  const image = join(mkdtempSync(join(tmpdir(), "wsync-ext4-img-")), "fs.img");
  const dropImage = () => rmSync(join(image, ".."), { recursive: true, force: true });
  const fd = openSync(image, "w");
  writeSync(fd, Buffer.alloc(1), 0, 1, bytes - 1);
  closeSync(fd);
  const mk = run("mkfs.ext4", ["-q", "-F", image]);
  if (!mk.ok) {
    dropImage();
    throw new Error(`mkfs.ext4: ${mk.out}`);
  }
  const dir = mkdtempSync(join(tmpdir(), "wsync-ext4-"));
  const r = run("mount", ["-o", "loop,errors=remount-ro", image, dir]);
  if (!r.ok) {
    dropImage();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount -o loop: ${r.out}`);
  }
  const m = track(dir, dropImage);
  const source = run("findmnt", ["-no", "SOURCE", dir]).out.split("/").pop() ?? "";
  return {
    ...m,
    cleanup: () => m.cleanup(),
    failReadOnly() {
      const r = spawnSync("sh", ["-c", `echo wsync-test > /sys/fs/ext4/${source}/trigger_fs_error`], {
        encoding: "utf8",
      });
      if (r.status !== 0) throw new Error(`trigger_fs_error on ${source}: ${r.stderr}`);
    },
  };
}

/** Unmounts whatever a test left mounted (afterEach/afterAll, and on process exit). */
export function cleanupMounts(): void {
  for (const m of [...mounted]) m.cleanup();
}
process.on("exit", cleanupMounts);

/** Fills the filesystem holding `dir` with a ballast file until it is full; returns its path. */
export function fill(dir: string): string {
  const path = join(dir, "ballast");
  const fd = openSync(path, "a");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) {
      try {
        writeSync(fd, chunk);
      } catch (e) {
        if ((e as { code?: string }).code !== "ENOSPC") throw e;
        break;
      }
    }
    // The last pages: whatever a 64 KiB write could not take.
    for (;;) {
      try {
        writeSync(fd, chunk, 0, 4096);
      } catch (e) {
        if ((e as { code?: string }).code !== "ENOSPC") throw e;
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

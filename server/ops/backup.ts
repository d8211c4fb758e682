import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { VERSION } from "../version.ts";

/**
 * `wsync backup` and `wsync restore` for an embedded (SQLite) installation (issue 34,
 * docs/decisions/backup-restore.md). The database is copied with `VACUUM INTO`: one read transaction,
 * so under WAL the copy is the database as of one commit, whatever other processes write meanwhile
 * (the server keeps running). Then the JWT secret and the blob folder (data/blobs/, encrypted files)
 * are copied, and a manifest names every file with its size and SHA-256 and the row count of every
 * table.
 */

export const MANIFEST = "manifest.json";
export const FORMAT = "wsync-backup";
export const FORMAT_VERSION = 1;
const DB_FILE = "wsync.db";
const SECRET_FILE = "jwt-secret";
const BLOBS_DIR = "blobs";

export interface ManifestFile {
  path: string;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  wsyncVersion: string;
  createdAt: string;
  /** `PRAGMA user_version` of the copy: the last schema migration applied. */
  schemaVersion: number;
  /** Rows per table in the copied database. */
  counts: Record<string, number>;
  /** Whether the JWT secret is in the backup (absent when it came from WSYNC_JWT_SECRET). */
  jwtSecret: "included" | "from-environment";
  files: ManifestFile[];
}

export class BackupError extends Error {
  override readonly name = "BackupError";
  constructor(
    message: string,
    /** "conflict": the destination is not empty; "invalid": the backup does not verify. */
    readonly kind: "conflict" | "invalid" | "missing" = "invalid",
  ) {
    super(message);
  }
}

function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Every regular file under `dir`, as paths relative to it (forward slashes), sorted. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.push(relative(dir, p).split(sep).join("/"));
    }
  };
  walk(dir);
  return out;
}

/** Rows per table (the schema's own tables, not SQLite's). */
export function tableCounts(db: Database): Record<string, number> {
  const tables = db
    .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all() as { name: string }[];
  const counts: Record<string, number> = {};
  for (const { name } of tables)
    counts[name] = (
      db.query(`SELECT COUNT(*) AS n FROM "${name.replaceAll('"', '""')}"`).get() as { n: number }
    ).n;
  return counts;
}

function isTar(path: string): boolean {
  return /\.tar(\.gz)?$/.test(path);
}

export interface BackupResult {
  to: string;
  manifest: Manifest;
}

/**
 * Backs up the data folder `dataDir` to `to`: a new directory (absent or empty), or a file ending
 * in `.tar` or `.tar.gz`. Safe while the server runs.
 */
export async function backupDataDir(opts: {
  dataDir: string;
  to: string;
  /** Whether the server takes its secret from WSYNC_JWT_SECRET (then there is no file to copy). */
  secretFromEnv: boolean;
  now?: () => Date;
}): Promise<BackupResult> {
  const dataDir = resolve(opts.dataDir);
  const to = resolve(opts.to);
  const dbPath = join(dataDir, DB_FILE);
  if (!existsSync(dbPath)) throw new BackupError(`no database at ${dbPath}`, "missing");
  if (to === dataDir || to.startsWith(dataDir + sep))
    throw new BackupError(`the backup cannot go inside the data folder ${dataDir}`, "conflict");
  if (existsSync(to) && !(statSync(to).isDirectory() && readdirSync(to).length === 0))
    throw new BackupError(`${to} already exists: back up into a new file or an empty folder`, "conflict");
  // Built in a private staging folder beside the destination, then moved into place in one rename:
  // an interrupted backup leaves no half-written backup under the name asked for.
  mkdirSync(dirname(to), { recursive: true });
  const stage = mkdtempSync(join(isTar(to) ? tmpdir() : dirname(to), ".wsync-backup-"));
  chmodSync(stage, 0o700);
  try {
    const source = new Database(dbPath, { readonly: false, create: false });
    let counts: Record<string, number>;
    let schemaVersion: number;
    try {
      source.run("PRAGMA busy_timeout = 5000");
      // One read transaction: the copy is the database as of one commit (WAL readers never block
      // the writer, nor it them).
      source.run(`VACUUM INTO '${join(stage, DB_FILE).replaceAll("'", "''")}'`);
    } finally {
      source.close();
    }
    const copy = new Database(join(stage, DB_FILE), { readonly: true });
    try {
      const check = copy.query("PRAGMA integrity_check").get() as { integrity_check: string };
      if (check.integrity_check !== "ok")
        throw new BackupError(`the copy failed its integrity check: ${check.integrity_check}`);
      counts = tableCounts(copy);
      schemaVersion = (copy.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    } finally {
      copy.close();
    }
    const secretPath = join(dataDir, SECRET_FILE);
    const secretIncluded = !opts.secretFromEnv && existsSync(secretPath);
    if (secretIncluded) copyFileSync(secretPath, join(stage, SECRET_FILE));
    // Blobs after the database: a blob is written before the row naming it commits, so every blob
    // the copied rows name is there (a newer blob may come along unreferenced, which is harmless).
    const blobs = join(dataDir, BLOBS_DIR);
    if (existsSync(blobs) && statSync(blobs).isDirectory()) {
      for (const rel of filesUnder(blobs)) {
        const dest = join(stage, BLOBS_DIR, rel);
        mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
        copyFileSync(join(blobs, rel), dest);
      }
    }
    const files = filesUnder(stage).map((path) => {
      const p = join(stage, path);
      chmodSync(p, 0o600);
      return { path, bytes: statSync(p).size, sha256: sha256File(p) };
    });
    const manifest: Manifest = {
      format: FORMAT,
      formatVersion: FORMAT_VERSION,
      wsyncVersion: VERSION,
      createdAt: (opts.now?.() ?? new Date()).toISOString(),
      schemaVersion,
      counts,
      jwtSecret: secretIncluded ? "included" : "from-environment",
      files,
    };
    writeFileSync(join(stage, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    if (isTar(to)) {
      // Held in memory while written (Bun.Archive takes bytes): the folder form suits large installations.
      const entries: Record<string, Uint8Array> = {};
      for (const path of [MANIFEST, ...files.map((f) => f.path)])
        entries[path] = readFileSync(join(stage, path));
      const tmp = `${to}.partial-${process.pid}`;
      await Bun.Archive.write(tmp, entries, to.endsWith(".gz") ? { compress: "gzip" } : undefined);
      chmodSync(tmp, 0o600);
      renameSync(tmp, to);
    } else {
      if (existsSync(to)) rmSync(to, { recursive: true });
      renameSync(stage, to);
    }
    return { to, manifest };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Reads and checks a backup's manifest and every file it names (size and SHA-256, nothing more). */
export function verifyBackupDir(dir: string): Manifest {
  const manifestPath = join(dir, MANIFEST);
  if (!existsSync(manifestPath)) throw new BackupError(`${dir} has no ${MANIFEST}: not a wsync backup`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
  } catch {
    throw new BackupError(`${MANIFEST} is not readable JSON`);
  }
  if (manifest.format !== FORMAT || !Array.isArray(manifest.files))
    throw new BackupError(`${MANIFEST} is not a wsync backup manifest`);
  if (manifest.formatVersion > FORMAT_VERSION)
    throw new BackupError(
      `the backup's format ${manifest.formatVersion} is newer than this wsync reads (${FORMAT_VERSION}): restore with wsync ${manifest.wsyncVersion} or later`,
    );
  const listed = new Set(manifest.files.map((f) => f.path));
  for (const f of manifest.files) {
    // Paths stay inside the backup (a crafted manifest must not name ../../etc/passwd).
    if (f.path.startsWith("/") || f.path.split("/").includes(".."))
      throw new BackupError(`${MANIFEST} names a path outside the backup: ${f.path}`);
    const p = join(dir, f.path);
    if (!existsSync(p)) throw new BackupError(`${f.path} is missing from the backup`);
    if (statSync(p).size !== f.bytes || sha256File(p) !== f.sha256)
      throw new BackupError(`${f.path} does not match its checksum in ${MANIFEST}: the backup is damaged`);
  }
  for (const path of filesUnder(dir))
    if (path !== MANIFEST && !listed.has(path))
      throw new BackupError(`${path} is in the backup but not in ${MANIFEST}`);
  if (!listed.has(DB_FILE)) throw new BackupError(`the backup has no ${DB_FILE}`);
  const db = new Database(join(dir, DB_FILE), { readonly: true });
  try {
    const check = db.query("PRAGMA integrity_check").get() as { integrity_check: string };
    if (check.integrity_check !== "ok") throw new BackupError(`${DB_FILE} fails its integrity check`);
    const counts = tableCounts(db);
    for (const [table, n] of Object.entries(manifest.counts ?? {}))
      if (counts[table] !== n)
        throw new BackupError(`${DB_FILE}: ${table} has ${counts[table] ?? 0} rows, the manifest says ${n}`);
  } finally {
    db.close();
  }
  return manifest;
}

/** Whether a data folder is empty enough to restore into (absent, or an empty directory). */
function emptyTarget(dataDir: string): boolean {
  return !existsSync(dataDir) || (statSync(dataDir).isDirectory() && readdirSync(dataDir).length === 0);
}

/**
 * Restores a backup (a folder, or a `.tar`/`.tar.gz` file) into `dataDir`, which must be absent or
 * empty: a non-empty one is refused before anything is written. The backup is verified first.
 */
export async function restoreDataDir(opts: { from: string; dataDir: string }): Promise<Manifest> {
  const from = resolve(opts.from);
  const dataDir = resolve(opts.dataDir);
  if (!existsSync(from)) throw new BackupError(`no backup at ${from}`, "missing");
  if (!emptyTarget(dataDir))
    throw new BackupError(
      `${dataDir} is not empty: restore into an empty (or new) data folder; nothing was written`,
      "conflict",
    );
  let stage: string | null = null;
  try {
    let dir = from;
    if (statSync(from).isFile()) {
      stage = mkdtempSync(join(tmpdir(), ".wsync-restore-"));
      chmodSync(stage, 0o700);
      await new Bun.Archive(await Bun.file(from).bytes()).extract(stage);
      dir = stage;
    }
    const manifest = verifyBackupDir(dir);
    // Checked again: another process may have filled it while we verified.
    if (!emptyTarget(dataDir))
      throw new BackupError(`${dataDir} is not empty: nothing was written`, "conflict");
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
    for (const f of manifest.files) {
      const dest = join(dataDir, f.path);
      mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
      copyFileSync(join(dir, f.path), dest);
      chmodSync(dest, 0o600);
    }
    return manifest;
  } finally {
    if (stage) rmSync(stage, { recursive: true, force: true });
  }
}

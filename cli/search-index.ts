import { Database } from "bun:sqlite";
import { chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import {
  currentText,
  type IndexChange,
  type IndexedEdit,
  type IndexedMessage,
  MIN_SUBSTRING,
  matchRanges,
  orderKey,
  type SearchQuery,
  searchBody,
} from "../core/search/index.ts";

/**
 * The CLI's search index (docs/search.md): one SQLite file per server beside the key file
 * (`HOST_PORT.search.sqlite`), mode 0600 like it, holding the decrypted text of what this device has
 * read. Words and their beginnings are found through an FTS5 table (prefix indexes); substrings of
 * three characters or more through a second FTS5 table with the trigram tokenizer. Text goes into
 * both already normalized (core/search/normalize.ts), so accents and case fold the same way as in
 * the browser. Which items are indexed, and what edits and deletions do, is core's (index-model.ts).
 * Both full-text tables are contentless (the text is in `messages` once) and the word table keeps no
 * positions (phrases are substrings: the trigram table's).
 */

export const searchIndexPath = (storePath: string) => `${storePath.replace(/\.json$/, "")}.search.sqlite`;

/** Removes the index and SQLite's side files (logout, `search --off`). */
export function deleteSearchIndex(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(path + suffix, { force: true });
}

export interface StoredHit {
  uri: string;
  channelId: string;
  channelName: string | null;
  seq: number;
  author: { did: string; handle: string };
  signedAt: number;
  verified: boolean;
  notes: string[];
  hasFile: boolean;
  text: string;
  edited: boolean;
  ranges: [number, number][];
}

interface MessageRow {
  id: number;
  uri: string;
  channel_id: string;
  seq: number;
  author_did: string;
  author_handle: string;
  client_msg_id: string | null;
  signed_at: number;
  verified: number;
  notes: string;
  has_file: number;
  text: string;
  current: string;
  edited: number;
}

interface EditRow {
  uri: string;
  channel_id: string;
  target: string;
  client_msg_id: string;
  author_did: string;
  prev: string | null;
  has_prev: number;
  signed_at: number;
  text: string;
}

/**
 * The layout's version, kept in `meta`: a file of another version is emptied and rebuilt (the index
 * is derived data; the next `--backfill` reads the history again).
 */
// 3: "ß" is indexed as "ss" (core's normalize), so text normalized by version 2 is stale.
const SCHEMA_VERSION = "3";
const TABLES = ["meta", "channels", "messages", "edits", "words", "tri"];

/**
 * A message's row id is also its row id in both full-text tables: core's `orderKey` (its signed time
 * in ms, then the low bits of its seq), so that id order is "newest first" and a query walks the
 * full-text index in that order and stops at the first 50 answers (no sort of every match). An id
 * already taken moves up by one.
 */

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS channels (
  channel_id TEXT PRIMARY KEY, name TEXT, complete_seq INTEGER NOT NULL DEFAULT -1
);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY, uri TEXT NOT NULL UNIQUE, channel_id TEXT NOT NULL, seq INTEGER NOT NULL,
  author_did TEXT NOT NULL, author_handle TEXT NOT NULL, client_msg_id TEXT, signed_at INTEGER NOT NULL,
  verified INTEGER NOT NULL, notes TEXT NOT NULL, has_file INTEGER NOT NULL, text TEXT NOT NULL,
  current TEXT NOT NULL, edited INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_key ON messages (channel_id, author_did, client_msg_id);
CREATE TABLE IF NOT EXISTS edits (
  uri TEXT PRIMARY KEY, channel_id TEXT NOT NULL, target TEXT NOT NULL, client_msg_id TEXT NOT NULL,
  author_did TEXT NOT NULL, prev TEXT, has_prev INTEGER NOT NULL, signed_at INTEGER NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edits_target ON edits (channel_id, target);
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(body, tokenize = 'unicode61 remove_diacritics 0', prefix = '1 2',
  content = '', contentless_delete = 1, detail = none);
CREATE VIRTUAL TABLE IF NOT EXISTS tri USING fts5(body, tokenize = 'trigram', content = '', contentless_delete = 1);
`;

/** A term as an FTS5 string (double quotes doubled). */
const quoted = (t: string) => `"${t.replaceAll('"', '""')}"`;

export class SearchIndex {
  readonly db: Database;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Created 0600 before SQLite opens it (SQLite gives its side files the same mode).
    if (!existsSync(path)) closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT, 0o600));
    chmodSync(path, 0o600);
    this.db = new Database(path);
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = NORMAL");
    // The full-text tables' pages stay in memory between queries of one process (the screen's).
    this.db.run("PRAGMA cache_size = -16000");
    this.db.transaction(() => {
      const empty = !this.db.query("SELECT 1 FROM sqlite_schema WHERE name = 'meta'").get();
      const version = empty
        ? null
        : this.db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'schema'").get();
      if (!empty && version?.value !== SCHEMA_VERSION)
        for (const t of TABLES) this.db.run(`DROP TABLE IF EXISTS ${t}`);
      this.db.run(SCHEMA);
      this.db.query("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
    })();
  }

  close(): void {
    this.db.close();
  }

  /** The account the index belongs to: another account's index is emptied before use. */
  claim(did: string): void {
    const row = this.db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get("did");
    if (row?.value === did) return;
    if (row) this.clear();
    this.db.query("INSERT OR REPLACE INTO meta (key, value) VALUES ('did', ?)").run(did);
  }

  clear(): void {
    this.db.transaction(() => {
      for (const t of TABLES) this.db.run(`DELETE FROM ${t}`);
      this.db.query("INSERT INTO meta (key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
    })();
  }

  get size(): number {
    return (this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM messages").get() as { n: number }).n;
  }

  setChannel(channelId: string, name: string | null): void {
    this.db
      .query(
        "INSERT INTO channels (channel_id, name) VALUES (?1, ?2) ON CONFLICT (channel_id) DO UPDATE SET name = ?2",
      )
      .run(channelId, name);
  }

  /** The highest seq a finished backfill covered (-1: never finished). */
  completeSeq(channelId: string): number {
    return (
      this.db
        .query<{ complete_seq: number }, [string]>("SELECT complete_seq FROM channels WHERE channel_id = ?")
        .get(channelId)?.complete_seq ?? -1
    );
  }

  setCompleteSeq(channelId: string, seq: number): void {
    this.db.query("UPDATE channels SET complete_seq = ? WHERE channel_id = ?").run(seq, channelId);
  }

  channelIds(): string[] {
    return this.db
      .query<{ channel_id: string }, []>("SELECT channel_id FROM channels")
      .all()
      .map((r) => r.channel_id);
  }

  /** Forgets a channel this user is no longer in. */
  dropChannel(channelId: string): void {
    this.db.transaction(() => {
      const ids = this.db
        .query<{ id: number }, [string]>("SELECT id FROM messages WHERE channel_id = ?")
        .all(channelId);
      for (const { id } of ids) this.unindex(id);
      this.db.query("DELETE FROM messages WHERE channel_id = ?").run(channelId);
      this.db.query("DELETE FROM edits WHERE channel_id = ?").run(channelId);
      this.db.query("DELETE FROM channels WHERE channel_id = ?").run(channelId);
    })();
  }

  /** Applies changes in one transaction. */
  applyAll(changes: Iterable<IndexChange | null>): void {
    this.db.transaction(() => {
      for (const c of changes) if (c) this.applyOne(c);
    })();
  }

  apply(change: IndexChange | null): void {
    if (change) this.applyAll([change]);
  }

  private applyOne(c: IndexChange): void {
    if (c.op === "message") {
      const m = c.message;
      // Read again as it was indexed (every later read of a long channel): nothing to write. Asked of
      // SQLite itself, which is cheaper than reading the row back (`read --limit 10000`).
      if (this.unchanged(m)) return;
      const old = this.db.query<MessageRow, [string]>("SELECT * FROM messages WHERE uri = ?").get(m.uri);
      // The same message again with another signed time (never from a well-behaved author) moves.
      if (old && old.signed_at !== m.signedAt) {
        this.unindex(old.id);
        this.db.query("DELETE FROM messages WHERE id = ?").run(old.id);
      }
      const fresh = !old || old.signed_at !== m.signedAt;
      let id = old && !fresh ? old.id : orderKey(m.signedAt, m.seq);
      if (fresh) while (this.db.query("SELECT 1 FROM messages WHERE id = ?").get(id)) id++;
      this.db
        .query(
          `INSERT INTO messages (id, uri, channel_id, seq, author_did, author_handle, client_msg_id, signed_at, verified,
             notes, has_file, text, current, edited)
           VALUES (?12, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, 0)
           ON CONFLICT (uri) DO UPDATE SET seq = ?3, author_handle = ?5, signed_at = ?7, verified = ?8, notes = ?9,
             has_file = ?10, text = ?11`,
        )
        .run(...messageParams(m), id);
      const row = this.db.query<MessageRow, [number]>("SELECT * FROM messages WHERE id = ?").get(id);
      if (row) this.refresh(row, fresh);
    } else if (c.op === "edit") {
      const e = c.edit;
      this.db
        .query(
          `INSERT OR REPLACE INTO edits (uri, channel_id, target, client_msg_id, author_did, prev, has_prev, signed_at, text)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          e.uri,
          e.channelId,
          e.target,
          e.clientMsgId,
          e.authorDid,
          e.prev ?? null,
          e.prev === undefined ? 0 : 1,
          e.signedAt,
          e.text,
        );
      this.refreshTarget(e.channelId, e.target);
    } else {
      const m = this.db.query<MessageRow, [string]>("SELECT * FROM messages WHERE uri = ?").get(c.uri);
      if (m) {
        this.unindex(m.id);
        this.db.query("DELETE FROM messages WHERE id = ?").run(m.id);
      }
      const e = this.db.query<EditRow, [string]>("SELECT * FROM edits WHERE uri = ?").get(c.uri);
      if (e) {
        this.db.query("DELETE FROM edits WHERE uri = ?").run(c.uri);
        this.refreshTarget(e.channel_id, e.target);
      }
    }
  }

  /** Whether a stored row already says everything `m` says (its edits are kept apart, in `edits`). */
  private unchanged(m: IndexedMessage): boolean {
    return (
      this.db
        .query(
          `SELECT 1 FROM messages WHERE uri = ?1 AND channel_id = ?2 AND seq = ?3 AND author_did = ?4
             AND author_handle = ?5 AND client_msg_id IS ?6 AND signed_at = ?7 AND verified = ?8 AND notes = ?9
             AND has_file = ?10 AND text = ?11`,
        )
        .get(...messageParams(m)) !== null
    );
  }

  private refreshTarget(channelId: string, target: string): void {
    const [did, clientMsgId] = target.split("|");
    const row = this.db
      .query<MessageRow, [string, string, string]>(
        "SELECT * FROM messages WHERE channel_id = ? AND author_did = ? AND client_msg_id = ?",
      )
      .get(channelId, did ?? "", clientMsgId ?? "");
    if (row) this.refresh(row);
  }

  /** Recomputes a message's current text from its edits (core's rules) and reindexes it. */
  private refresh(row: MessageRow, fresh = false): void {
    const message = toMessage(row);
    const edits = row.client_msg_id
      ? this.db
          .query<EditRow, [string, string]>("SELECT * FROM edits WHERE channel_id = ? AND target = ?")
          .all(row.channel_id, `${row.author_did}|${row.client_msg_id}`)
          .map(toEdit)
      : [];
    const cur = currentText(message, edits);
    this.db
      .query("UPDATE messages SET current = ?, edited = ? WHERE id = ?")
      .run(cur.text, cur.edited ? 1 : 0, row.id);
    // A new row has nothing in the full-text tables to remove (a delete there reads the old text).
    if (!fresh) this.unindex(row.id);
    const body = searchBody(cur.text);
    this.db.query("INSERT INTO words (rowid, body) VALUES (?, ?)").run(row.id, body);
    this.db.query("INSERT INTO tri (rowid, body) VALUES (?, ?)").run(row.id, body);
  }

  private unindex(id: number): void {
    this.db.query("DELETE FROM words WHERE rowid = ?").run(id);
    this.db.query("DELETE FROM tri WHERE rowid = ?").run(id);
  }

  /**
   * Messages answering a query, newest first. `channelIds`: only these channels (--channel); `in:`
   * names are matched against the channel names stored with the index, or ids.
   */
  search(q: SearchQuery, opts: { channelIds?: string[]; limit?: number } = {}): StoredHit[] {
    // Every term of three characters or more in one trigram query, the shorter ones (words and their
    // beginnings) in one query of the word table: FTS5 intersects the lists itself.
    const long = q.terms.filter((t) => t.length >= MIN_SUBSTRING).map(quoted);
    const short = q.terms.filter((t) => t.length < MIN_SUBSTRING).map((t) => `${quoted(t)}*`);
    // The table that drives the query, walked newest first (ids are ordered by signed time); the
    // other, if any, is a membership test.
    const drive = long.length
      ? { table: "tri", match: long }
      : short.length
        ? { table: "words", match: short }
        : null;
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (drive) {
      where.push(`f.${drive.table} MATCH ?`);
      args.push(drive.match.join(" AND "));
      if (drive.table === "tri" && short.length) {
        where.push("m.id IN (SELECT rowid FROM words WHERE words MATCH ?)");
        args.push(short.join(" AND "));
      }
    }
    const id = drive ? "f.rowid" : "m.id";
    if (opts.channelIds) {
      where.push(`m.channel_id IN (${opts.channelIds.map(() => "?").join(",") || "NULL"})`);
      args.push(...opts.channelIds);
    }
    if (q.in.length) {
      where.push(`(${q.in.map(() => "(m.channel_id = ? OR lower(c.name) = ?)").join(" OR ")})`);
      for (const c of q.in) args.push(c, c);
    }
    if (q.from.length) {
      // The handle itself, or its name before the server suffix.
      where.push(
        `(${q.from.map(() => "(lower(m.author_handle) = ? OR substr(lower(m.author_handle), 1, ?) = ?)").join(" OR ")})`,
      );
      for (const f of q.from) args.push(f, f.length + 1, `${f}.`);
    }
    // Dates bound the walk through the ids (a millisecond wide, for ids moved up), then exactly.
    if (q.before !== null) {
      where.push(`${id} < ?`, "m.signed_at < ?");
      args.push(orderKey(q.before + 1, 0), q.before);
    }
    if (q.after !== null) {
      where.push(`${id} >= ?`, "m.signed_at >= ?");
      args.push(orderKey(q.after, 0), q.after);
    }
    if (q.hasFile) where.push("m.has_file = 1");
    // CROSS JOIN keeps the full-text table outside, so its rowid order is the answer's order and the
    // walk stops at the limit: only the rows shown are read from `messages`.
    const from = drive ? `${drive.table} f CROSS JOIN messages m ON m.id = f.rowid` : "messages m";
    const sql = `SELECT m.*, c.name AS channel_name FROM ${from} LEFT JOIN channels c ON c.channel_id = m.channel_id
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${id} DESC LIMIT ?`;
    args.push(opts.limit ?? 50);
    const rows = this.db
      .query<MessageRow & { channel_name: string | null }, (string | number)[]>(sql)
      .all(...args);
    return rows.map((r) => ({
      uri: r.uri,
      channelId: r.channel_id,
      channelName: r.channel_name,
      seq: r.seq,
      author: { did: r.author_did, handle: r.author_handle },
      signedAt: r.signed_at,
      verified: r.verified === 1,
      notes: JSON.parse(r.notes) as string[],
      hasFile: r.has_file === 1,
      text: r.current,
      edited: r.edited === 1,
      ranges: matchRanges(r.current, q.terms),
    }));
  }
}

/** A message's columns as the statements above number them (?1 to ?11). */
function messageParams(m: IndexedMessage) {
  return [
    m.uri,
    m.channelId,
    m.seq,
    m.author.did,
    m.author.handle,
    m.clientMsgId,
    m.signedAt,
    m.verified ? 1 : 0,
    JSON.stringify(m.notes),
    m.hasFile ? 1 : 0,
    m.text,
  ] as const;
}

function toMessage(r: MessageRow): IndexedMessage {
  return {
    uri: r.uri,
    channelId: r.channel_id,
    seq: r.seq,
    author: { did: r.author_did, handle: r.author_handle },
    clientMsgId: r.client_msg_id,
    signedAt: r.signed_at,
    verified: r.verified === 1,
    notes: JSON.parse(r.notes) as string[],
    hasFile: r.has_file === 1,
    text: r.text,
  };
}

function toEdit(r: EditRow): IndexedEdit {
  return {
    uri: r.uri,
    channelId: r.channel_id,
    target: r.target,
    clientMsgId: r.client_msg_id,
    authorDid: r.author_did,
    prev: r.has_prev ? r.prev : undefined,
    signedAt: r.signed_at,
    text: r.text,
  };
}

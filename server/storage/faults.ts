import { ApiError } from "../../core/protocol/index.ts";
import type { Storage } from "./types.ts";

/**
 * Storage faults: the disk is full, the filesystem went read-only or fails. They are not bugs of a
 * request, so they are answered 503 Unavailable with a Retry-After (server/http/errors.ts) instead of
 * a 500 with a stack trace, and logged once per change of state, not once per request.
 */

export type StorageFaultKind = "full" | "unavailable";

/** Seconds a client is asked to wait before retrying a write refused by a storage fault. */
export const STORAGE_RETRY_AFTER_S = 30;

/**
 * Thrown by a guarded storage instead of the driver's error when the storage itself is at fault: an
 * ApiError "Unavailable" (503), so HTTP answers it with Retry-After and WebSocket with `retryAfter`.
 */
export class StorageUnavailableError extends ApiError {
  constructor(
    readonly kind: StorageFaultKind,
    /** The driver's reason, e.g. "SQLITE_FULL: database or disk is full"; for the log only. */
    readonly reason: string,
  ) {
    super(
      "Unavailable",
      kind === "full" ? "storage is full, try again later" : "storage is unavailable, try again later",
      STORAGE_RETRY_AFTER_S,
    );
  }
}

// SQLite's primary result codes (the low byte of an extended code).
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;

/**
 * Whether a storage error is a fault of the storage (full, read-only, I/O error, cannot open) and of
 * which kind. bun:sqlite's SQLiteError carries `code` ("SQLITE_IOERR_WRITE") and `errno` (the
 * extended result code, 778); either is enough. Bun.sql's PostgresError ("ERR_POSTGRES_…") is
 * classified by classifyPostgresFault. Anything else (constraints, busy, bugs) is null.
 */
export function classifyStorageFault(e: unknown): StorageFaultKind | null {
  if (typeof e !== "object" || e === null) return null;
  const { code, errno } = e as { code?: unknown; errno?: unknown };
  if (typeof code === "string" && code.startsWith("ERR_POSTGRES_")) return classifyPostgresFault(code, errno);
  if (typeof code === "string" && code.startsWith("SQLITE_")) {
    if (code === "SQLITE_FULL") return "full";
    if (/^SQLITE_(IOERR|READONLY|CANTOPEN)(_|$)/.test(code)) return "unavailable";
    return null;
  }
  if (typeof errno === "number" && (e as { name?: unknown }).name === "SQLiteError") {
    const primary = errno & 0xff;
    if (primary === SQLITE_FULL) return "full";
    if (primary === SQLITE_IOERR || primary === SQLITE_READONLY || primary === SQLITE_CANTOPEN)
      return "unavailable";
  }
  return null;
}

/**
 * Bun.sql's own codes for a connection that could not be made or was lost (the server is down,
 * restarting or unreachable): the storage is unavailable, not the request wrong.
 */
const POSTGRES_CONNECTION_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
]);

/**
 * A PostgreSQL error (Bun.sql's PostgresError: `code` is Bun's "ERR_POSTGRES_…", `errno` the server's
 * SQLSTATE): disk full (53100) is "full"; the rest of class 53 (insufficient resources: out of memory,
 * too many connections), class 08 (connection exception), 57P01-57P03 (admin or crash shutdown,
 * cannot connect now), 58030 (I/O error, as SQLITE_IOERR) and 25006 (read-only transaction: a standby
 * or a read-only server, as SQLITE_READONLY) are "unavailable", as is a connection Bun could not make
 * or lost. Anything else (constraints, deadlocks, bugs) is null.
 */
export function classifyPostgresFault(code: string, errno: unknown): StorageFaultKind | null {
  if (typeof errno === "string") {
    if (errno === "53100") return "full";
    if (errno.startsWith("53") || errno.startsWith("08")) return "unavailable";
    if (errno === "57P01" || errno === "57P02" || errno === "57P03") return "unavailable";
    if (errno === "58030" || errno === "25006") return "unavailable";
  }
  return POSTGRES_CONNECTION_CODES.has(code) ? "unavailable" : null;
}

/** Store methods that only read; every other method is taken as a write. */
const READ_METHOD =
  /^(by[A-Z]\w*|get|access|summary|list\w*|member|members|channelIdsOf|invite|invitesFor|readMarkers|state|keysFor|page|since)$/;

/**
 * The state of the storage as seen by requests: a fault moves it to "full" or "unavailable" (one log
 * line), the next successful write (or any success, when it was a read that failed) moves it back
 * (one log line). Reads are not refused while writes fail: SQLite in WAL mode keeps answering them.
 */
export class StorageHealth {
  state: "ok" | StorageFaultKind = "ok";
  /** When a fault was last seen (Date.now() ms), for readiness (server/ops/health.ts). */
  lastFaultAt = 0;
  /** Faults seen, by kind (read by /metrics). */
  readonly faults: Record<string, number> = {};
  /** Whether the fault was seen on a write, so that only a successful write ends it. */
  private faultOnWrite = false;
  constructor(private readonly log: (message: string) => void) {}

  fault(kind: StorageFaultKind, reason: string, onWrite: boolean): void {
    this.lastFaultAt = Date.now();
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
    this.faultOnWrite = this.state === "ok" ? onWrite : this.faultOnWrite || onWrite;
    if (this.state === kind) return;
    this.state = kind;
    this.log(`storage became unavailable (${kind === "full" ? "full" : "failing"}): ${reason}`);
  }

  success(onWrite: boolean): void {
    if (this.state === "ok" || (this.faultOnWrite && !onWrite)) return;
    this.state = "ok";
    this.faultOnWrite = false;
    this.log("storage is back: writes succeed again");
  }
}

function oneLine(e: unknown): string {
  const { code, message } = e as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(e);
  return (typeof code === "string" ? `${code}: ${text}` : text).replace(/\s+/g, " ").slice(0, 300);
}

function guardStore<T extends object>(store: T, health: StorageHealth): T {
  // One wrapper per method, made at its first use (not one closure per call).
  const wrappers = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      const known = wrappers.get(prop);
      if (known) return known;
      const write = !READ_METHOD.test(prop);
      const succeeded = (result: unknown) => {
        health.success(write);
        return result;
      };
      const failed = (e: unknown): never => {
        const kind = classifyStorageFault(e);
        if (!kind) throw e;
        const reason = oneLine(e);
        health.fault(kind, reason, write);
        throw new StorageUnavailableError(kind, reason);
      };
      // Not an async function: one promise per call (every message's append passes here).
      const wrapper = (...args: unknown[]): Promise<unknown> => {
        let result: unknown;
        try {
          // Looked up at each call: a test may replace a store's method after the first use.
          const fn = Reflect.get(target, prop) as (...a: unknown[]) => unknown;
          result = fn.apply(target, args);
        } catch (e) {
          return Promise.reject(e).catch(failed);
        }
        return Promise.resolve(result).then(succeeded, failed);
      };
      wrappers.set(prop, wrapper);
      return wrapper;
    },
  });
}

/**
 * Wraps every store of `storage` so that storage faults become StorageUnavailableError and are
 * logged once per change of state. Wrapping an already guarded storage returns it as is.
 */
export function guardStorage(storage: Storage, log: (message: string) => void): Storage {
  if (healthOf.has(storage)) return storage;
  const health = new StorageHealth(log);
  // Every store (an object member), whatever stores the interface grows; functions such as close()
  // are passed through bound.
  const wrapped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(storage)) {
    if (typeof value === "function") wrapped[key] = value.bind(storage);
    else if (typeof value === "object" && value !== null) wrapped[key] = guardStore(value, health);
    else wrapped[key] = value;
  }
  const result = wrapped as unknown as Storage;
  healthOf.set(result, health);
  return result;
}

const healthOf = new WeakMap<Storage, StorageHealth>();

/** The health tracker of a guarded storage (for tests and diagnostics). */
export function storageHealth(storage: Storage): StorageHealth | undefined {
  return healthOf.get(storage);
}

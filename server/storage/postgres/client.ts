import type { ReservedSQL, SQL, TransactionSQL } from "bun";

// BIGINT columns (strings from Bun.sql) are read through num/numOrNull in ../rows.ts.

/** The SQLSTATE of a PostgreSQL server error, or undefined. */
export function sqlState(e: unknown): string | undefined {
  if (typeof e !== "object" || e === null) return undefined;
  const { errno } = e as { errno?: unknown };
  return typeof errno === "string" ? errno : undefined;
}

/** The constraint a PostgreSQL error names (unique, foreign key, check), or undefined. */
export function constraintOf(e: unknown): string | undefined {
  if (typeof e !== "object" || e === null) return undefined;
  const { constraint } = e as { constraint?: unknown };
  return typeof constraint === "string" ? constraint : undefined;
}

/** Deadlock and serialization failure: the transaction was rolled back and may simply run again. */
const RETRYABLE = new Set(["40P01", "40001"]);

const MAX_ATTEMPTS = 8;

/**
 * The connection pool shared by every store. Each store method runs through `read` or `tx`, which
 * keep count of what is running, so that `close()` waits for every pending write before it closes
 * the pool (the analogue of SQLite's commitPending before close).
 */
export class PgClient {
  private readonly running = new Set<Promise<unknown>>();
  private closing: Promise<void> | null = null;

  constructor(readonly sql: SQL) {}

  /** Counts `p` as running until it settles: `close()` waits for it (a store's own queued work). */
  track<T>(p: Promise<T>): Promise<T> {
    this.running.add(p);
    const done = () => this.running.delete(p);
    p.then(done, done);
    return p;
  }

  /** One statement (or several that need no common snapshot), outside any explicit transaction. */
  run<T>(fn: (sql: SQL) => Promise<T>): Promise<T> {
    return this.track(fn(this.sql));
  }

  /**
   * One transaction (READ COMMITTED, as every statement that needs a stable view locks its rows).
   * Run again from the start when PostgreSQL rolled it back for a deadlock or a serialization
   * failure, or when `retry` says so (e.g. a unique violation that a re-run turns into a lookup).
   */
  tx<T>(fn: (tx: TransactionSQL) => Promise<T>, retry?: (e: unknown) => boolean): Promise<T> {
    return this.track(this.retrying(async () => (await this.sql.begin((tx) => fn(tx))) as T, retry));
  }

  /** Runs `once` again when PostgreSQL rolled it back for a reason worth a retry (see `tx`). */
  private async retrying<T>(once: () => Promise<T>, retry?: (e: unknown) => boolean): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once();
      } catch (e) {
        const state = sqlState(e);
        const again = (state !== undefined && RETRYABLE.has(state)) || (retry?.(e) ?? false);
        if (!again || attempt >= MAX_ATTEMPTS) throw e;
        await Bun.sleep(Math.random() * 5 * attempt);
      }
    }
  }

  /**
   * One transaction sent as a single pipeline: BEGIN, the statements and COMMIT go out together on
   * one connection, and PostgreSQL runs them in order, each statement (READ COMMITTED) seeing what
   * committed before it started, locks taken by the earlier ones included. One round trip instead of
   * one per statement: under load each round trip waits its turn in this process's event loop too.
   * Returns the statements' results once COMMIT answered COMMIT; otherwise throws the first failure
   * (PostgreSQL rolled the whole transaction back). Run again as `tx` is.
   */
  pipelineTx(
    statements: (c: ReservedSQL) => PromiseLike<unknown>[],
    retry?: (e: unknown) => boolean,
  ): Promise<unknown[]> {
    const once = async (): Promise<unknown[]> => {
      const c = await this.sql.reserve();
      try {
        const settled = await Promise.allSettled([c`BEGIN`, ...statements(c), c`COMMIT`]);
        for (const r of settled) if (r.status === "rejected") throw r.reason;
        const commit = settled[settled.length - 1] as PromiseFulfilledResult<{ command?: string }>;
        if (commit.value.command !== "COMMIT")
          throw new Error(`transaction ended with ${commit.value.command}`);
        return settled.slice(1, -1).map((r) => (r as PromiseFulfilledResult<unknown>).value);
      } finally {
        c.release();
      }
    };
    return this.track(this.retrying(once, retry));
  }

  /** Waits for every running operation (writes included), then closes the pool. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.running.size > 0) await Promise.allSettled([...this.running]);
      await this.sql.close();
    })();
    return this.closing;
  }
}

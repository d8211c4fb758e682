import { ApiError } from "../../core/protocol/index.ts";
import type { Services } from "../services/services.ts";
import { STORAGE_RETRY_AFTER_S, storageHealth } from "../storage/faults.ts";

/** How long each dependency has to answer a readiness probe (issue 34: "within a second"). */
export const READY_TIMEOUT_MS = 1_000;
/** Seconds a load balancer is asked to wait before probing a process that is not ready again. */
export const READY_RETRY_AFTER_S = 5;

/** A did no account has (it does not match the did:plc pattern): the probe only reads. */
const PROBE_DID = "did:probe:ready";

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export interface ReadyAnswer {
  ok: true;
  storage: "ok";
  redis: "ok" | "not configured";
}

/**
 * Readiness (`GET /api/ready`): storage answers a read within a second, a storage fault (writes
 * failing: full or read-only) was not seen in the last Retry-After window, and Redis, when
 * configured, answers PING within a second. Otherwise 503 Unavailable with Retry-After, naming
 * which part failed (never a URL, host or password). Liveness (`/api/health`) stays 200 meanwhile:
 * the process is alive, restarting it would not help.
 *
 * The fault window (rather than "until a write succeeds") keeps a process that a balancer took out
 * from staying out for good: with no traffic, no write would ever clear the fault.
 */
export async function checkReady(s: Services): Promise<ReadyAnswer> {
  const failures: string[] = [];
  try {
    await within(s.storage.accounts.byDid(PROBE_DID), READY_TIMEOUT_MS, "storage");
  } catch (e) {
    failures.push(
      /did not answer/.test(String((e as Error).message))
        ? `storage did not answer within ${READY_TIMEOUT_MS} ms`
        : "storage is failing",
    );
  }
  const health = storageHealth(s.storage);
  if (
    failures.length === 0 &&
    health &&
    health.state !== "ok" &&
    Date.now() - health.lastFaultAt < STORAGE_RETRY_AFTER_S * 1000
  )
    failures.push(health.state === "full" ? "storage is full (writes fail)" : "storage writes fail");
  let redis: ReadyAnswer["redis"] = "not configured";
  if (s.bus.ping) {
    try {
      await within(s.bus.ping(), READY_TIMEOUT_MS, "redis");
      redis = "ok";
    } catch {
      failures.push(`Redis did not answer within ${READY_TIMEOUT_MS} ms`);
    }
  }
  if (failures.length > 0)
    throw new ApiError("Unavailable", `not ready: ${failures.join("; ")}`, READY_RETRY_AFTER_S);
  return { ok: true, storage: "ok", redis };
}

// LoginGuard with shared counts (Redis) that fail part-way: no failure is lost.
import { expect, test } from "bun:test";
import { LoginGuard, type SharedLoginAttempts } from "../../server/services/login-throttle.ts";
import { systemClock } from "../../server/util/clock.ts";

test("Redis failing after the check: the failed login is counted in this process, and counts once Redis is gone", async () => {
  let up = true;
  const down = () => Promise.reject(new Error("Redis did not answer"));
  const shared: SharedLoginAttempts = {
    begin: async () => (up ? 0 : down()),
    fail: down,
    clear: down,
    release: down,
  };
  const logged: string[] = [];
  const g = new LoginGuard(systemClock, {}, shared, (m) => logged.push(m));
  for (let i = 0; i < 5; i++) {
    const attempt = await g.begin("did:x", "10.0.0.9");
    expect(attempt.wait).toBe(0);
    await attempt.fail();
  }
  expect(logged.filter((m) => m.includes("shared login throttle unavailable"))).toHaveLength(5);
  // Redis now down for the check too: this process's own counts, which hold the five failures.
  up = false;
  expect((await g.begin("did:x", "10.0.0.9")).wait).toBeGreaterThan(0);
  // Another account from the same address is not locked by them.
  expect((await g.begin("did:y", "10.0.0.9")).wait).toBe(0);
});

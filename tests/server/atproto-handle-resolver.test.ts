/**
 * The guard on handle resolution's /.well-known fetch (server/atproto/handle-resolver.ts): a user
 * types any handle, so the server must never be made to reach an inner address for it.
 */
import { expect, test } from "bun:test";
import { isPublicAddress, publicOnlyFetch } from "../../server/atproto/handle-resolver.ts";

test("only public unicast addresses pass", () => {
  for (const a of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"])
    expect(isPublicAddress(a)).toBe(true);
  for (const a of [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
    "::1",
    "::",
    "fc00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "not an address",
  ])
    expect(isPublicAddress(a)).toBe(false);
});

/** A fetch that records what reached it and answers a DID. */
function recorder() {
  const reached: string[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    reached.push(`${String(input)} redirect=${init?.redirect}`);
    return new Response("did:plc:abcdefghijklmnopqrstuvwx\n");
  }) as typeof fetch;
  return { reached, fetchImpl };
}

test("a name that resolves to any inner address is refused before any request", async () => {
  const { reached, fetchImpl } = recorder();
  const names: Record<string, string[]> = {
    "inner.example": ["10.0.0.5"],
    "mixed.example": ["93.184.216.34", "127.0.0.1"],
    "metadata.example": ["169.254.169.254"],
    "nothing.example": [],
  };
  const guarded = publicOnlyFetch(fetchImpl, async (host) => names[host] ?? []);
  for (const host of Object.keys(names))
    await expect(guarded(`https://${host}/.well-known/atproto-did`)).rejects.toThrow("not a public address");
  await expect(guarded("https://127.0.0.1/.well-known/atproto-did")).rejects.toThrow("not a public address");
  await expect(guarded("https://[::1]/.well-known/atproto-did")).rejects.toThrow("not a public address");
  await expect(guarded("http://public.example/.well-known/atproto-did")).rejects.toThrow("https only");
  expect(reached).toEqual([]);
});

test("a public name is fetched without following redirects, and a long answer is refused", async () => {
  const { reached, fetchImpl } = recorder();
  const guarded = publicOnlyFetch(fetchImpl, async () => ["93.184.216.34"]);
  const res = await guarded("https://alice.example/.well-known/atproto-did");
  expect(await res.text()).toBe("did:plc:abcdefghijklmnopqrstuvwx\n");
  expect(reached).toEqual(["https://alice.example/.well-known/atproto-did redirect=error"]);

  const big = publicOnlyFetch(
    (async () => new Response("x".repeat(64 * 1024))) as unknown as typeof fetch,
    async () => ["93.184.216.34"],
  );
  await expect(big("https://alice.example/.well-known/atproto-did")).rejects.toThrow("bytes");
});

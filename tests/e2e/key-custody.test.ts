/**
 * Real Chromium, key custody (issue 11, docs/decisions/key-custody.md): secrets that earlier versions
 * kept in localStorage move to the vault on first load; nothing a script can read holds a private key
 * or a token; stored keys refuse to export.
 */
import { expect } from "bun:test";
import { toBase64Url } from "../../core/crypto/index.ts";
import { ok } from "../server/harness.ts";
import { createChannel, person, seal } from "../server/people.ts";
import { expectMessage, openChannel, WAIT } from "./chat.ts";
import { browserTest, e2eServer, leaksSecrets, newProfile, pageSecrets } from "./harness.ts";

const t = e2eServer();

browserTest(
  "an earlier version's localStorage (private key, epoch keys, bearer session) moves to the vault and the cookie, then is deleted; the channel still reads",
  async () => {
    const alice = await person(t.url, "legacy");
    const room = `old${Math.random().toString(36).slice(2, 7)}`;
    const created = await createChannel(t.url, alice, "public", room);
    const epoch = { epochId: created.epochId, epochNumber: 1, epochKey: created.epochKey };
    await ok(
      t.url,
      "send",
      await seal(alice, created.channel, epoch, "written before the upgrade"),
      alice.token,
    );

    // What a v1-era browser held: every secret in localStorage.
    const legacy: Record<string, string> = {
      auth: JSON.stringify(alice.session),
      token: alice.session.accessJwt,
      privateKey: alice.privateKey,
      publicKey: alice.publicKey,
      [`wsync-epochs:${created.channel.id}`]: JSON.stringify([
        {
          epochId: created.epochId,
          epochNumber: 1,
          symmetricKeyJwk: { kty: "oct", k: toBase64Url(created.epochKey), alg: "A256GCM" },
          createdAt: Date.now(),
        },
      ]),
    };
    const { page, context, errors } = await newProfile();
    page.setDefaultTimeout(WAIT);
    // Any page of the origin will do to write its storage; then the board loads with it.
    await page.goto(`${t.url}/login`);
    await page.evaluate((e: Record<string, string>) => {
      for (const [k, v] of Object.entries(e)) localStorage.setItem(k, v);
    }, legacy);
    await page.goto(`${t.url}/sync`);
    await page.locator('[data-testid="board"]').waitFor({ timeout: WAIT });
    await openChannel(page, room);
    await expectMessage(page, alice.name, "written before the upgrade");

    const secrets = await pageSecrets(page);
    expect(leaksSecrets(secrets, alice.privateKey)).toEqual([]);
    expect(secrets.local.privateKey).toBeUndefined();
    expect(secrets.local.token).toBeUndefined();
    expect(Object.keys(secrets.local).filter((k) => k.startsWith("wsync-epochs:"))).toEqual([]);
    expect(JSON.parse(secrets.local.auth ?? "{}")).toEqual({
      did: alice.session.did,
      handle: alice.session.handle,
      email: alice.session.email,
      publicKey: alice.publicKey,
      session: "cookie",
    });
    expect(secrets.vault.publicKey).toBe(alice.publicKey);
    expect(secrets.vault.identityExport).toBe("refused: InvalidAccessError / refused: InvalidAccessError");
    expect(secrets.vault.epochKeys).toBeGreaterThanOrEqual(1);
    expect(new Set(secrets.vault.epochExports)).toEqual(new Set(["refused: InvalidAccessError"]));
    // A second tab of the same profile shares the cookie: both stay signed in (one refresh at a time).
    const second = await context.newPage();
    await second.goto(`${t.url}/sync`);
    await second.locator('[data-testid="board"]').waitFor({ timeout: WAIT });
    await page.reload();
    await page.locator('[data-testid="board"]').waitFor({ timeout: WAIT });
    await openChannel(page, room);
    await expectMessage(page, alice.name, "written before the upgrade");
    expect(errors).toEqual([]);
    await context.close();
    // The old bearer refresh token was spent on the exchange: presenting it again is a replay, which
    // ends the session (reuse detection), so this comes last,
    // with the browser already closed (its pages leave for "/" when their session ends).
    const replay = await fetch(`${t.url}/api/auth/refresh`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.session.refreshJwt}` },
    });
    expect(replay.status).toBe(401);
  },
  120_000,
);

/**
 * Direct conversations, server side: a test server on either storage backend (SQLite, or PostgreSQL
 * when WSYNC_TEST_DATABASE_URL is set), and the calls a client makes to open a conversation for real:
 * `/dm/open`, a signed invite for each other member (their admission evidence), and epoch 1.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildInviteV3, signObject } from "../../core/crypto/index.ts";
import { type Conversation, WS_PATH } from "../../core/protocol/index.ts";
import { createApp } from "../../server/app.ts";
import { loadConfig } from "../../server/config.ts";
import { openPostgresStorage } from "../../server/storage/postgres/index.ts";
import { openSqliteStorage } from "../../server/storage/sqlite/index.ts";
import type { Storage } from "../../server/storage/types.ts";
import { ok, type TestServer } from "./harness.ts";
import type { Person } from "./people.ts";
import { newDatabase } from "./pg-harness.ts";
import { rotate3 } from "./v3-people.ts";

export type Backend = "sqlite" | "postgres";

export async function startOn(backend: Backend, env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "wsync-dm-"));
  const db = backend === "postgres" ? await newDatabase() : null;
  const config = loadConfig({
    PORT: "0",
    WSYNC_DATA_DIR: dataDir,
    WSYNC_WEATHER_URL: "http://127.0.0.1:9/",
    ...(db ? { WSYNC_DATABASE_URL: db.url } : {}),
    ...env,
  });
  const storage: Storage = db
    ? await openPostgresStorage({ url: db.url, max: 4 })
    : openSqliteStorage({ path: config.sqlitePath, synchronous: "normal" });
  const logs: string[] = [];
  const { app, services } = createApp({
    config,
    storage,
    jwtSecret: crypto.getRandomValues(new Uint8Array(32)),
    log: (m) => logs.push(m),
  });
  app.listen({ port: 0, hostname: "127.0.0.1" });
  const port = app.server?.port;
  if (config.publicUrlFromPort) config.publicUrl = `http://localhost:${port}`;
  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}${WS_PATH}`,
    config,
    storage,
    dataDir,
    services,
    app,
    logs,
    async stop() {
      await app.stop(true);
      await storage.close();
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs a v3 invite (no sealed link: a conversation has none) from `from` for `invitee`. */
export async function signedInvite(
  from: Person,
  channelId: string,
  invitee: { did: string; handle: string },
) {
  const invite = buildInviteV3({
    channelId,
    inviteeDid: invitee.did,
    inviterDid: from.session.did,
    createdAt: Date.now(),
  });
  return { invite, signature: await signObject(from.identity, invite) };
}

/**
 * What the opener's client does: open, give every other member their signed invite, make epoch 1
 * (wrapped to everyone: nobody else needs to be online).
 */
export async function openConversation(
  url: string,
  opener: Person,
  others: Person[],
  name?: string,
): Promise<{
  conversation: Conversation;
  epoch: { epochId: string; epochNumber: number; epochKey: Uint8Array } | null;
}> {
  const res = await ok(
    url,
    "dmOpen",
    { handles: others.map((o) => o.session.handle), ...(name ? { name } : {}) },
    opener.token,
  );
  const ch = res.conversation.channel;
  let epoch = null;
  if (res.created) {
    for (const o of others) {
      const signed = await signedInvite(opener, ch.id, o.session);
      await ok(url, "invite", { channelUri: ch.uri, handle: o.session.handle, ...signed }, opener.token);
    }
    const made = await rotate3(url, opener, ch, { reason: "create" });
    if (made.res.status !== 200)
      throw new Error(`epoch 1: ${made.res.status} ${JSON.stringify(made.res.body)}`);
    epoch = { epochId: made.epochId, epochNumber: made.epochNumber, epochKey: made.epochKey };
  }
  return { conversation: res.conversation, epoch };
}

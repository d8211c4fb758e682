import { SQL } from "bun";
import type { Storage } from "../types.ts";
import { PostgresAccounts } from "./accounts.ts";
import { PostgresAdmin } from "./admin.ts";
import { PostgresAtproto } from "./atproto.ts";
import { PostgresBlobs } from "./blobs.ts";
import { PostgresBots } from "./bots.ts";
import { PostgresChannels } from "./channels.ts";
import { PgClient } from "./client.ts";
import { PostgresDeviceLinks } from "./device-links.ts";
import { PostgresDirect } from "./direct.ts";
import { PostgresEpochs } from "./epochs.ts";
import { migrate } from "./migrations.ts";
import { PostgresRetention } from "./retention.ts";
import { PostgresSessions } from "./sessions.ts";
import { PostgresTimeline } from "./timeline.ts";

export interface PostgresOptions {
  /** postgres://user:password@host:port/database (Bun.sql's URL syntax, ?sslmode= etc. included). */
  url: string;
  /** Connections in the pool (Bun's default is 10). */
  max?: number;
}

/**
 * Connects to the database, migrates it (safe when several processes start at once: see migrate) and
 * returns the stores. Storage faults (server down or refusing connections, out of disk or memory)
 * surface as the driver's errors, which server/storage/faults.ts classifies as it does SQLite's.
 */
export async function openPostgresStorage(opts: PostgresOptions): Promise<Storage> {
  const sql = new SQL(opts.url, {
    max: opts.max ?? 10,
    // Give up on a connection attempt after 10 s instead of waiting for the OS.
    connectionTimeout: 10,
  });
  try {
    await migrate(sql);
  } catch (e) {
    await sql.close();
    throw e;
  }
  const db = new PgClient(sql);
  return {
    accounts: new PostgresAccounts(db),
    sessions: new PostgresSessions(db),
    bots: new PostgresBots(db),
    channels: new PostgresChannels(db),
    epochs: new PostgresEpochs(db),
    deviceLinks: new PostgresDeviceLinks(db),
    admin: new PostgresAdmin(db),
    retention: new PostgresRetention(db),
    direct: new PostgresDirect(db),
    blobs: new PostgresBlobs(db),
    atproto: new PostgresAtproto(db),
    timeline: new PostgresTimeline(db),
    close: () => db.close(),
  };
}

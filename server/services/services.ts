import type { BlobService } from "../blobs/blob-service.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../ops/log.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { Bus } from "../realtime/bus.ts";
import type { Hub } from "../realtime/hub.ts";
import type { Presence } from "../realtime/presence.ts";
import type { Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import type { createWeatherService } from "../weather/index.ts";
import type { AuthService } from "./auth-service.ts";
import type { BotService } from "./bot-service.ts";
import type { ChannelService } from "./channel-service.ts";
import type { DeviceLinkService } from "./device-link-service.ts";
import type { DirectService } from "./direct-service.ts";
import type { EpochService } from "./epoch-service.ts";
import type { KeyBackupService } from "./key-backup-service.ts";
import type { MessageService } from "./message-service.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { RetentionSweep } from "./retention.ts";

/**
 * Everything a request handler or socket reaches: the services one process runs (server/app.ts makes
 * them). Its own module, so the HTTP handlers and the socket need not import the app that imports them.
 */
export interface Services {
  config: Config;
  storage: Storage;
  bus: Bus;
  hub: Hub;
  presence: Presence;
  clock: Clock;
  /** Operational messages at warning level (a shorthand for `logger.warn`). */
  log: (message: string) => void;
  /** The process's logger (server/ops/log.ts): levels, JSON or text, never a secret. */
  logger: Logger;
  auth: AuthService;
  /** Bot accounts and their tokens (docs/decisions/bot-tokens.md). */
  bots: BotService;
  channels: ChannelService;
  epochs: EpochService;
  messages: MessageService;
  keyBackups: KeyBackupService;
  /** Direct conversations (docs/protocol-extensions.md "Direct conversations"). */
  direct: DirectService;
  /** Device-link slots (protocol §8 "Fresh devices"). */
  deviceLinks: DeviceLinkService;
  weather: ReturnType<typeof createWeatherService>;
  /** Per-user write limits shared by HTTP and WebSocket (services/rate-limit.ts). */
  limits: RateLimiter;
  /** Closes the sockets of accounts disabled or deleted, from the database (server/ops/account-watch.ts). */
  accountWatch: { start(): void; stop(): void; tick(): Promise<void> };
  /** Removes records older than the retention in force (services/retention.ts). */
  retention: RetentionSweep;
  /** Counters for /metrics (server/ops/metrics.ts): plain numbers the hot path adds to. */
  metrics: Metrics;
  /** Encrypted files (server/blobs/). */
  blobs: BlobService;
  /**
   * Steps other parts take before an account is deleted by its owner, while it still exists (the
   * ATProto key proof's removal from the user's repository). Each is best effort: a failure is logged.
   */
  beforeAccountDeletion: ((did: string) => Promise<void>)[];
}

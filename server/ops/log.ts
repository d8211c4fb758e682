/**
 * The server's one logger (issue 34): every operational line goes through here, as text
 * (`[wsync] message key=value`, the default) or as one JSON object per line (`WSYNC_LOG=json`), at or
 * above `WSYNC_LOG_LEVEL` (debug, info, warn, error; default info).
 *
 * Never a token, password, key or message body: callers pass none (they log ids, handles, dids,
 * codes), and as a second line of defence every field whose name says it holds a secret is dropped,
 * and every string is scrubbed of what looks like a JWT, a bearer credential, a bot token or a long
 * base64 run (keys, ciphertexts, signatures). docs/operators.md "Logs".
 */

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "json" | "text";
export type LogFields = Record<string, string | number | boolean | null | undefined>;

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /**
   * An info line written to standard output instead of standard error: the start-up announcements
   * ("wsync listening on …") that supervisors and tests wait for.
   */
  announce(message: string, fields?: LogFields): void;
  /** A logger that adds `fields` (a request id, a socket id) to every line. */
  child(fields: LogFields): Logger;
  readonly level: LogLevel;
  readonly format: LogFormat;
}

export interface LoggerOptions {
  format?: LogFormat;
  level?: LogLevel;
  /** Where lines go (default: process.stderr, and process.stdout for `announce`). */
  write?: (line: string, stream: "stderr" | "stdout") => void;
  now?: () => number;
}

/** Field names that may hold a secret: such a field is never written, whatever its value. */
const SECRET_FIELD = /pass|token|secret|jwt|key|authorization|cookie|content|body|cipher|signature|envelope/i;

const JWT = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
const BEARER = /\b(Bearer|Basic)\s+\S+/gi;
const BOT_TOKEN = /\bwsb_[A-Za-z0-9_-]+/g;
/** 64+ characters of base64/base64url/hex: public and private keys, ciphertexts, signatures, hashes. */
const LONG_BASE64 = /[A-Za-z0-9+/_-]{64,}={0,2}/g;

/** The text with every JWT, bearer credential, bot token and long base64 run replaced. */
export function scrub(text: string): string {
  return text
    .replace(JWT, "[redacted jwt]")
    .replace(BEARER, "$1 [redacted]")
    .replace(BOT_TOKEN, "[redacted bot token]")
    .replace(LONG_BASE64, (run) =>
      // A file path is a long run too: only runs that look random (mixed case and digits) go.
      /[A-Z]/.test(run) && /[0-9]/.test(run) && /[a-z]/.test(run) ? "[redacted]" : run,
    );
}

function cleanFields(fields: LogFields | undefined): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  if (!fields) return out;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (SECRET_FIELD.test(k)) continue;
    out[k] = typeof v === "string" ? scrub(v) : v;
  }
  return out;
}

const defaultWrite = (line: string, stream: "stderr" | "stdout") => {
  (stream === "stdout" ? process.stdout : process.stderr).write(`${line}\n`);
};

function textValue(v: string | number | boolean | null): string {
  const s = String(v);
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s);
}

export function createLogger(options: LoggerOptions = {}, bound: LogFields = {}): Logger {
  const format = options.format ?? "text";
  const level = options.level ?? "info";
  const write = options.write ?? defaultWrite;
  const now = options.now ?? Date.now;
  const min = RANK[level];
  const base = cleanFields(bound);
  const emit = (
    lvl: LogLevel,
    message: string,
    fields: LogFields | undefined,
    stream: "stderr" | "stdout",
  ) => {
    if (RANK[lvl] < min) return;
    const extra = { ...base, ...cleanFields(fields) };
    const msg = scrub(message);
    if (format === "json") {
      write(JSON.stringify({ time: new Date(now()).toISOString(), level: lvl, msg, ...extra }), stream);
      return;
    }
    const tail = Object.entries(extra)
      .map(([k, v]) => ` ${k}=${textValue(v)}`)
      .join("");
    // Announcements keep the plain form people and scripts know ("wsync listening on …").
    if (stream === "stdout") write(`${msg}${tail}`, stream);
    else write(`[wsync]${lvl === "info" ? "" : ` ${lvl}:`} ${msg}${tail}`, stream);
  };
  return {
    level,
    format,
    debug: (m, f) => emit("debug", m, f, "stderr"),
    info: (m, f) => emit("info", m, f, "stderr"),
    warn: (m, f) => emit("warn", m, f, "stderr"),
    error: (m, f) => emit("error", m, f, "stderr"),
    announce: (m, f) => emit("info", m, f, "stdout"),
    child: (fields) => createLogger(options, { ...bound, ...fields }),
  };
}

export class LogConfigError extends Error {
  override readonly name = "LogConfigError";
}

/** The logger `WSYNC_LOG` and `WSYNC_LOG_LEVEL` ask for; a value it does not know is an error at start. */
export function loggerFromEnv(
  env: Record<string, string | undefined>,
  write?: LoggerOptions["write"],
): Logger {
  const format = env.WSYNC_LOG || "text";
  if (format !== "json" && format !== "text") throw new LogConfigError("WSYNC_LOG must be json or text");
  const level = env.WSYNC_LOG_LEVEL || "info";
  if (!(level in RANK)) throw new LogConfigError("WSYNC_LOG_LEVEL must be debug, info, warn or error");
  return createLogger({ format, level: level as LogLevel, ...(write ? { write } : {}) });
}

/** A logger whose warnings and errors go to a plain `(message) => void` (the tests' `log` hook). */
export function loggerToFunction(log: (message: string) => void): Logger {
  return createLogger({ level: "warn", write: (line) => log(line.replace(/^\[wsync\] (warn|error): /, "")) });
}

/** A short random id for one HTTP request or socket (12 base64url characters, 72 bits). */
export function newRequestId(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString("base64url");
}

/** An X-Request-Id a trusted proxy set, if it is a short, plain token; otherwise null (make one). */
export function acceptedRequestId(header: string | null): string | null {
  return header && /^[A-Za-z0-9._:-]{1,64}$/.test(header) ? header : null;
}

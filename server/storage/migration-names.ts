/**
 * Every schema migration, in order: its version and, in one line, what it adds. The single source of
 * truth for which versions exist; each backend's migrations.ts (sqlite/, postgres/) holds only its
 * SQL for each version, and `checkMigrations` holds it to this list when the backend migrates a
 * database (and tests/server/storage/migration-names.test.ts holds it there too). A new migration is
 * named here first, then written in both backends. Never edit or renumber a released one.
 */
export const MIGRATION_NAMES: readonly { readonly version: number; readonly name: string }[] = [
  { version: 1, name: "accounts, sessions, channels, members, invites, epochs, epoch keys, timeline" },
  {
    version: 2,
    name: "protocol v2: admission evidence, signed invites and deletions, v1 secret links voided",
  },
  { version: 3, name: "key backups (one client-encrypted backup per account)" },
  { version: 4, name: "key history (replaced public keys, to check what they signed)" },
  { version: 5, name: "read markers (how far each user has read each channel)" },
  { version: 6, name: "refresh grace window (previous refresh hash, rotation time and count)" },
  { version: 7, name: "protocol v3: key changes, signed read markers, tombstones, device-link slots" },
  { version: 8, name: "trust states (sealed, versioned, beside the key backup)" },
  { version: 9, name: "bot accounts (owner, token hash, channels; docs/decisions/bot-tokens.md)" },
  { version: 10, name: "direct conversations (unique per pair), message request states, blocks" },
  { version: 11, name: "encrypted files (blob records: channel, uploader, message, size)" },
  { version: 12, name: "accounts disabled or deleted by the operator (wsync admin, account deletion)" },
  { version: 13, name: "channel retention (the owner's signed setting, for the retention sweep)" },
  { version: 14, name: "per-account file quota overrides (wsync admin quota)" },
  { version: 15, name: "ATProto sign-in (linked identities, OAuth client state and sessions)" },
  {
    version: 16,
    name: "timeline: the author index kept for notices only (messages use the client-message one)",
  },
];

/**
 * Why `migrations` (one backend's list) does not match MIGRATION_NAMES, or null when it has the same
 * versions in the same order.
 */
export function migrationMismatch(migrations: readonly { version: number }[]): string | null {
  const expected = MIGRATION_NAMES.map((m) => m.version);
  const found = migrations.map((m) => m.version);
  const at = expected.findIndex((v, i) => found[i] !== v);
  if (at === -1 && found.length === expected.length) return null;
  const where = at === -1 ? expected.length : at;
  const name = MIGRATION_NAMES[where];
  const want = name ? `version ${name.version} (${name.name})` : "no more migrations";
  const got = found[where] === undefined ? "none" : `version ${found[where]}`;
  return `migration ${where + 1} of the list should be ${want}, but is ${got}; expected versions [${expected.join(", ")}], found [${found.join(", ")}]`;
}

/** Throws, naming the backend, when its migrations do not match MIGRATION_NAMES (see migrationMismatch). */
export function checkMigrations(backend: string, migrations: readonly { version: number }[]): void {
  const mismatch = migrationMismatch(migrations);
  if (mismatch !== null) {
    throw new Error(
      `${backend} migrations do not match server/storage/migration-names.ts: ${mismatch}. Every version ` +
        "named there needs its SQL in each backend's migrations.ts, in the same order, and no other.",
    );
  }
}

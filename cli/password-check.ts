import type { KeyValueStore as Store } from "../core/client/index.ts";

/**
 * Whether a backup passphrase is the login password (docs/key-backup.md: the server sees the login
 * password at every sign-in, so a backup under it is one the server can open). `keys backup` runs in
 * another process than `login`, and the CLI never stores the password itself; so `login` and
 * `register` keep a slow, salted check value of it (Argon2id, 19 MiB, 2 passes: OWASP's minimum for
 * stored passwords) in the config file, and `keys backup` compares the passphrase against it. The file
 * is 0600 and already holds the private key and the session; the check value only lets someone who
 * has the file guess the login password offline at Argon2id's cost. `logout` removes it.
 * (docs/decisions/backup-passphrase-not-password.md)
 */
const KEY = "wsync-cli-password-check";

interface Check {
  v: 1;
  salt: string;
  hash: string;
}

async function derive(secret: string, salt: Uint8Array): Promise<string> {
  const { argon2id } = await import("hash-wasm");
  return argon2id({
    password: secret.normalize("NFKC"),
    salt,
    parallelism: 1,
    iterations: 2,
    memorySize: 19 * 1024,
    hashLength: 32,
    outputType: "hex",
  });
}

export async function rememberPasswordCheck(store: Store, password: string): Promise<void> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const check: Check = { v: 1, salt: Buffer.from(salt).toString("hex"), hash: await derive(password, salt) };
  await store.set(KEY, JSON.stringify(check));
}

export async function forgetPasswordCheck(store: Store): Promise<void> {
  await store.delete(KEY);
}

/** True when `secret` is the password this device last signed in with; false when unknown. */
export async function isLoginPassword(store: Store, secret: string): Promise<boolean> {
  const raw = await store.get(KEY);
  if (!raw) return false;
  let check: Check;
  try {
    check = JSON.parse(raw) as Check;
  } catch {
    return false;
  }
  if (check.v !== 1 || typeof check.salt !== "string" || typeof check.hash !== "string") return false;
  const got = await derive(secret, Buffer.from(check.salt, "hex"));
  // Both are hex of the same length; a timing difference would tell nothing the file does not.
  return got === check.hash;
}

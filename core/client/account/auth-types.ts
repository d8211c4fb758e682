import type { BackupSecretKind } from "../../crypto/key-backup.ts";
import type { Keyring } from "../keys/keyring.ts";
import type { TrustOrigin } from "../keys/trust.ts";
import type { ApiClient } from "../net/api.ts";
import type { Realtime } from "../net/realtime.ts";
import type { KeyValueStore } from "../store.ts";
import type { ClientEvents, ClientState } from "../view/state.ts";
import type { KeyBackupFlow } from "./key-backup-flow.ts";
import type { SessionStore } from "./session.ts";
import type { TrustBackup } from "./trust-backup.ts";

/** Where this account's key is known to be kept besides this device (docs/decisions/key-securing.md). */
export type KeySecuredBy = "backup" | "linked" | "copy";

/** The store's record of it: per account and key, so another account or a replaced key starts over. */
export const KEY_SECURED = "wsync-key-secured";

/** This device's note of the ATProto key proof it published: "did publicKey" (key-proof.ts). */
export const PROOF_PUBLISHED = "wsync-atproto-proof";

/** What publishing the key proof (key-proof.ts) needs: the server, an access token, the store. */
export interface KeyProofHost {
  baseUrl: string;
  fetch(input: string, init?: RequestInit): Promise<Response>;
  headers: Record<string, string>;
  token(): Promise<string | null>;
  store: KeyValueStore;
  /** When a failed publication is tried again (AuthFlow.publishProof), in ms. */
  retryMs?: readonly number[];
}

/** What the authentication flow is given by the client. */
export interface AuthContext {
  state: ClientState;
  api: ApiClient;
  session: SessionStore;
  keyring: Keyring;
  realtime: Realtime;
  store: KeyValueStore;
  now(): number;
  changed(): void;
  emit<K extends keyof ClientEvents>(event: K, payload: ClientEvents[K]): void;
  log(message: string): void;
  /** Where this account's ATProto chat-key proof is published (key-proof.ts); absent: never. */
  proofs?: KeyProofHost;
  /** Runs a refresh alone among this browser's tabs (ClientOptions.refreshLock). */
  refreshLock<T>(fn: () => Promise<T>): Promise<T>;
}

/** What the flow holds in hand between calls (never stored readable). */
export interface AuthMemory {
  /** The keys of a registration not confirmed yet ("I've Saved My Keys"). */
  pendingKeys: { publicKey: string; privateKey: string } | null;
  /**
   * The private key while this page or process has it in hand anyway (just made, pasted or restored):
   * backup and key-image export can use it without it ever being stored in readable form.
   */
  keyInMemory: string | null;
  /** The login password during registration only, so a backup passphrase can be refused if equal. */
  registrationPassword: string | null;
}

/** What key-setup.ts uses of the flow (auth-flow.ts). */
export interface SetupHost {
  c: AuthContext;
  mem: AuthMemory;
  runAuth<T>(fn: () => Promise<T>): Promise<T>;
  afterAuth(serverPublicKey: string | null, o?: { atproto?: boolean }): Promise<void>;
  keySecured(by: KeySecuredBy): Promise<void>;
  backups(): Promise<KeyBackupFlow>;
  saveKeyBackup(input: { kind: BackupSecretKind; secret: string; privateKey?: string }): Promise<unknown>;
  trustBackup(): Promise<TrustBackup>;
  securedBy(): Promise<KeySecuredBy | null>;
  installKey(privateKey: string, publicKey: string, origin?: TrustOrigin): Promise<void>;
  endLocally(wipeKeys: boolean): Promise<void>;
}

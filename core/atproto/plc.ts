import { sha256 } from "@noble/hashes/sha2.js";
import { base32 } from "multiformats/bases/base32";
import { base64url } from "multiformats/bases/base64";
import { cidOf, dagCbor } from "./cbor.ts";
import { parseDidKey, verifyAtprotoSignature } from "./did-key.ts";

/** A PLC log that does not prove what it claims; `message` names the operation and the check. */
export class PlcLogError extends Error {
  override readonly name = "PlcLogError";
}

/** What a verified PLC log says a DID is now. */
export interface PlcState {
  did: string;
  rotationKeys: string[];
  /** The `atproto` verification method (a did:key), or null when there is none. */
  signingKey: string | null;
  /** Handles from `alsoKnownAs` (the `at://` prefix taken off), in order. */
  handles: string[];
  /** The `atproto_pds` service endpoint, or null. */
  pds: string | null;
  tombstoned: boolean;
}

type Op = Record<string, unknown>;

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** The state one operation sets, after checking its shape. */
function stateOf(did: string, op: Op, n: number): PlcState {
  const where = `operation ${n}`;
  if (op.type === "plc_tombstone")
    return { did, rotationKeys: [], signingKey: null, handles: [], pds: null, tombstoned: true };
  if (op.type === "create") {
    // The legacy genesis shape: one signing key, one recovery key, one handle, one service.
    for (const k of ["signingKey", "recoveryKey", "handle", "service"])
      if (typeof op[k] !== "string") throw new PlcLogError(`${where}: ${k} is missing`);
    return {
      did,
      rotationKeys: [op.recoveryKey as string, op.signingKey as string],
      signingKey: op.signingKey as string,
      handles: [op.handle as string],
      pds: op.service as string,
      tombstoned: false,
    };
  }
  if (op.type !== "plc_operation") throw new PlcLogError(`${where}: unknown type ${String(op.type)}`);
  if (!strings(op.rotationKeys) || op.rotationKeys.length === 0)
    throw new PlcLogError(`${where}: rotationKeys is not a list of keys`);
  if (!strings(op.alsoKnownAs)) throw new PlcLogError(`${where}: alsoKnownAs is not a list`);
  const vm = op.verificationMethods;
  if (typeof vm !== "object" || vm === null)
    throw new PlcLogError(`${where}: verificationMethods is missing`);
  const services = op.services;
  if (typeof services !== "object" || services === null)
    throw new PlcLogError(`${where}: services is missing`);
  const atproto = (vm as Record<string, unknown>).atproto;
  const pds = (services as Record<string, { type?: unknown; endpoint?: unknown } | undefined>).atproto_pds;
  return {
    did,
    rotationKeys: op.rotationKeys,
    signingKey: typeof atproto === "string" ? atproto : null,
    handles: op.alsoKnownAs.filter((a) => a.startsWith("at://")).map((a) => a.slice(5)),
    pds:
      pds && pds.type === "AtprotoPersonalDataServer" && typeof pds.endpoint === "string"
        ? pds.endpoint
        : null,
    tombstoned: false,
  };
}

function signedBy(op: Op, keys: string[]): boolean {
  if (typeof op.sig !== "string") return false;
  let sig: Uint8Array;
  try {
    sig = base64url.baseDecode(op.sig);
  } catch {
    return false;
  }
  const { sig: _omit, ...unsigned } = op;
  const bytes = dagCbor.encode(unsigned);
  for (const k of keys) {
    try {
      if (verifyAtprotoSignature(parseDidKey(k), bytes, sig)) return true;
    } catch {
      // A key that does not parse signs nothing; the next one may.
    }
  }
  return false;
}

/** did:plc:{first 24 characters of base32(sha256(DAG-CBOR of the signed genesis operation))}. */
export function plcDidOf(genesis: Op): string {
  return `did:plc:${base32.baseEncode(sha256(dagCbor.encode(genesis))).slice(0, 24)}`;
}

/**
 * Verifies a PLC audit log (`GET {plc}/{did}/log/audit`: `[{did, operation, cid, nullified,
 * createdAt}]`) from its genesis: the genesis operation hashes to the did and is signed by one of its
 * own rotation keys; each later operation names the one before by CID and is signed by one of that
 * one's rotation keys. Operations the directory marks nullified (overridden by a higher-priority key)
 * are left out. Throws PlcLogError with the reason; returns the DID's current state.
 *
 * It proves that every operation is authorized; it cannot prove that the log is the newest (whoever
 * relays it can leave the latest operations out): docs/decisions/atproto-key-proofs.md.
 */
export function verifyPlcAuditLog(did: string, log: unknown): PlcState {
  if (!Array.isArray(log) || log.length === 0) throw new PlcLogError("the log is empty");
  const ops: Op[] = [];
  for (const [i, e] of log.entries()) {
    if (typeof e !== "object" || e === null) throw new PlcLogError(`entry ${i} is not an object`);
    const entry = e as Record<string, unknown>;
    if (entry.did !== undefined && entry.did !== did) throw new PlcLogError(`entry ${i} is for another did`);
    if (entry.nullified === true) continue;
    const op = entry.operation;
    if (typeof op !== "object" || op === null || Array.isArray(op))
      throw new PlcLogError(`entry ${i} has no operation`);
    if (entry.cid !== undefined && entry.cid !== cidOf(op).toString())
      throw new PlcLogError(`entry ${i}'s cid is not its operation's`);
    ops.push(op as Op);
  }
  const genesis = ops[0];
  if (!genesis) throw new PlcLogError("every operation is nullified");
  if (genesis.prev !== null) throw new PlcLogError("the first operation is not a genesis (prev is set)");
  if (genesis.type === "plc_tombstone") throw new PlcLogError("the genesis operation is a tombstone");
  if (plcDidOf(genesis) !== did) throw new PlcLogError("the genesis operation does not hash to the did");
  let state = stateOf(did, genesis, 0);
  if (!signedBy(genesis, state.rotationKeys))
    throw new PlcLogError("operation 0 is not signed by its own rotation keys");
  let prev = cidOf(genesis).toString();
  for (let n = 1; n < ops.length; n++) {
    const op = ops[n] as Op;
    if (state.tombstoned) throw new PlcLogError(`operation ${n} follows a tombstone`);
    if (op.type === "create") throw new PlcLogError(`operation ${n} is a second genesis`);
    if (op.prev !== prev) throw new PlcLogError(`operation ${n} does not follow operation ${n - 1}`);
    if (!signedBy(op, state.rotationKeys))
      throw new PlcLogError(`operation ${n} is not signed by a rotation key of operation ${n - 1}`);
    state = stateOf(did, op, n);
    prev = cidOf(op).toString();
  }
  return state;
}

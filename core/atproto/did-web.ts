import { PlcLogError, type PlcState } from "./plc.ts";

/**
 * Reads a did:web DID document (W3C DID core, as ATProto uses it): the `#atproto` verification
 * method's key, the `#atproto_pds` service and the `at://` handles. Nothing signs a did:web document:
 * it is only as trustworthy as the web host that serves it (docs/decisions/atproto-key-proofs.md).
 */
export function readDidWebDocument(did: string, doc: unknown): PlcState {
  if (!did.startsWith("did:web:")) throw new PlcLogError("not a did:web");
  if (typeof doc !== "object" || doc === null) throw new PlcLogError("the DID document is not an object");
  const d = doc as Record<string, unknown>;
  if (d.id !== did) throw new PlcLogError("the DID document is for another did");
  const isRef = (id: unknown, frag: string) => id === `#${frag}` || id === `${did}#${frag}`;
  const vms = Array.isArray(d.verificationMethod) ? (d.verificationMethod as Record<string, unknown>[]) : [];
  const vm = vms.find((v) => v && isRef(v.id, "atproto") && typeof v.publicKeyMultibase === "string");
  const services = Array.isArray(d.service) ? (d.service as Record<string, unknown>[]) : [];
  const pds = services.find((s) => s && isRef(s.id, "atproto_pds") && typeof s.serviceEndpoint === "string");
  const aka = Array.isArray(d.alsoKnownAs)
    ? d.alsoKnownAs.filter((a): a is string => typeof a === "string")
    : [];
  return {
    did,
    rotationKeys: [],
    signingKey: vm ? `did:key:${vm.publicKeyMultibase as string}` : null,
    handles: aka.filter((a) => a.startsWith("at://")).map((a) => a.slice(5)),
    pds: pds ? (pds.serviceEndpoint as string) : null,
    tombstoned: false,
  };
}

import { generateIdentity, type Identity, importIdentity } from "../../../core/crypto/index.ts";
import { BASE32_ALPHABET } from "../../../core/protocol/index.ts";

export interface TestUser {
  did: string;
  publicKey: string;
  privateKey: string;
  identity: Identity;
}

/** A syntactically valid did (protocol §1) made from a counter. */
export function testDid(n: number): string {
  let tail = "";
  for (let v = n; tail.length < 24; v = Math.floor(v / 32)) tail = BASE32_ALPHABET[v % 32] + tail;
  return `did:plc:${tail}`;
}

export async function testUser(n: number): Promise<TestUser> {
  const g = await generateIdentity();
  return {
    did: testDid(n),
    publicKey: g.publicKey,
    privateKey: g.privateKey,
    identity: await importIdentity(g.privateKey),
  };
}

export const CHANNEL = "k2v7q2m3x4p5t6wz";

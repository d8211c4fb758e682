// The browser entry of the atproto-proof benchmark: the verifier as the web bundle would load it.
import { checkKeyProof } from "../../core/atproto/verify.ts";

(globalThis as { atprotoProof?: unknown }).atprotoProof = { checkKeyProof };

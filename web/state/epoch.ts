import { loadClient } from "./engine.ts";

/*
 * The epoch slice (spec §3 "Epoch state"): per open channel, the current epoch info
 * (engineState.open[id].epoch), whether its keys are loaded (.keysLoaded), and key-change warnings
 * (.warnings). Keys themselves never leave the engine.
 */
/** Safety numbers for comparing a member's key out of band (members sidebar). */
export async function safetyNumbers(did: string) {
  return (await loadClient()).safetyNumbers(did);
}

/** Trust the key whose safety number the user compared. */
export async function acceptKey(did: string, publicKey: string): Promise<void> {
  await (await loadClient()).acceptKeyChange(did, publicKey);
}

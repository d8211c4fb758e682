import type { Snapshot } from "valtio";
import type { SecurityCheck, SecurityWarning } from "../../../core/client/view/state.ts";
import { compareKeys } from "./members/panel.ts";

/**
 * Checks about a person's name or key, and a device that has only the server's word so far (protocol
 * §8 "fresh-device"): the channel still works, the user should compare. Every other failed check means
 * the server offered something this device refuses, or hid or moved something (a red warning).
 */
const INFORMS: ReadonlySet<SecurityCheck> = new Set(["key-changed", "handle", "fresh-device"]);

/** A few words naming each check, before its text, so a list of warnings reads at a glance. */
export const CHECK_TITLE: Record<SecurityCheck, string> = {
  signature: "Bad signature",
  creator: "Epoch by a non-member",
  "key-commitment": "Key does not match",
  chain: "Broken epoch chain",
  members: "Not in the member list",
  admission: "Unchecked member",
  rollback: "Rollback",
  fork: "Forked epochs",
  "legacy-after-v2": "Downgrade",
  handle: "Name changed",
  "key-changed": "Key changed",
  "member-key": "Key or name swapped",
  withheld: "Messages withheld",
  deletion: "Misplaced deletion",
  "fresh-device": "New device",
};

/**
 * Every security warning of the open channel, with its text (protocol §7), above the messages on
 * every viewport. A changed key keeps its COMPARE action, which opens that member's safety numbers.
 */
export function SecurityWarnings({ warnings }: { warnings: Snapshot<SecurityWarning[]> }) {
  if (warnings.length === 0) return null;
  // The engine should not repeat a warning; if it did, React would need unique keys anyway.
  const unique = new Map(warnings.map((w) => [`${w.check}|${w.epochNumber}|${w.did}|${w.text}`, w]));
  return (
    <div className="chat-warnings">
      {[...unique].map(([key, w]) => (
        <p
          key={key}
          className={`chat-warn${INFORMS.has(w.check) ? "" : " critical"}`}
          data-check={w.check}
          role="alert"
        >
          ⚠ <strong className="chat-warn-title">{CHECK_TITLE[w.check]}:</strong> {w.text}{" "}
          {w.check === "key-changed" && w.did ? (
            <button type="button" onClick={() => compareKeys(w.did as string)}>
              COMPARE
            </button>
          ) : null}
        </p>
      ))}
    </div>
  );
}

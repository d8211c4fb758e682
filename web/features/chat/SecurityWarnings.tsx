import type { Snapshot } from "valtio";
import type { SecurityCheck, SecurityWarning } from "../../../core/client/state.ts";
import { compareKeys } from "./members/panel.ts";

/**
 * Checks about a person's name or key: the channel still works, the user should compare. Every other
 * failed check means the server offered something this device refuses (a red warning).
 */
const ABOUT_A_PERSON: ReadonlySet<SecurityCheck> = new Set(["key-changed", "handle"]);

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
          className={`chat-warn${ABOUT_A_PERSON.has(w.check) ? "" : " critical"}`}
          data-check={w.check}
          role="alert"
        >
          ⚠ {w.text}{" "}
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

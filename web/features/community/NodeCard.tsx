import { ageRings, daysSince, relativeTime, SYNC_BOX_THRESHOLDS, syncBoxes } from "./display.ts";
import type { ForestNode } from "./forest-data.ts";

/** Concentric rings, one per age step (spec §4.8). */
function AgeRings({ rings, days }: { rings: number; days: number }) {
  return (
    <svg
      className="age-rings"
      viewBox="0 0 40 40"
      width="40"
      height="40"
      role="img"
      aria-label={`${days} days old, ${rings} ${rings === 1 ? "ring" : "rings"}`}
    >
      {Array.from({ length: rings }, (_, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the rings are positional and never reorder.
        <circle key={i} className="ring" cx="20" cy="20" r={4 + i * 5} />
      ))}
    </svg>
  );
}

/** Four boxes, filled at 3, 9, 27 and 81 syncs (spec §4.8). */
function SyncBoxes({ count }: { count: number }) {
  const filled = syncBoxes(count);
  return (
    <span className="sync-boxes" role="img" aria-label={`${count} syncs`}>
      {SYNC_BOX_THRESHOLDS.map((threshold, i) => (
        <span key={threshold} className={`sync-box${i < filled ? " filled" : ""}`} />
      ))}
      <span className="sync-count">{count}</span>
    </span>
  );
}

/** One discussion node of the FOREST (spec §2.14). */
export function NodeCard({ node, sphereHash, now }: { node: ForestNode; sphereHash: string; now: number }) {
  const days = daysSince(node.createdAt, now);
  return (
    <article
      className="node-card"
      data-testid="node-card"
      data-age-days={days}
      data-sync-count={node.syncCount}
    >
      <header className="node-head">
        <AgeRings rings={ageRings(days)} days={days} />
        <div>
          <h2 className="node-title">
            <a href={`/${sphereHash}/${node.nodeHash}`}>{node.title}</a>
          </h2>
          <code className="node-code">{node.code}</code>
        </div>
      </header>
      <ul className="node-discuss" aria-label="Discuss">
        {node.discuss.map((d) => (
          <li key={d}>{d}</li>
        ))}
      </ul>
      <footer className="node-foot">
        <time dateTime={node.createdAt} title={node.createdAt}>
          {relativeTime(node.createdAt, now)} ago
        </time>
        <SyncBoxes count={node.syncCount} />
      </footer>
    </article>
  );
}

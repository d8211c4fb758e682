import { useState } from "react";
import { forestNodes } from "./forest-data.ts";
import { NodeCard } from "./NodeCard.tsx";

/** The FOREST screen (spec §2.14): six placeholder nodes in a grid of one to four columns. */
export function Forest({ sphereHash, now = Date.now() }: { sphereHash: string; now?: number }) {
  // Picked once per visit: the placeholder's counts are random (spec §4.8).
  const [nodes] = useState(() => forestNodes(now));
  return (
    <section className="forest" aria-labelledby="forest-title">
      <h1 id="forest-title" className="forest-title">
        FOREST <span className="forest-sphere">{sphereHash}</span>
      </h1>
      <div className="forest-grid">
        {nodes.map((node) => (
          <NodeCard key={node.nodeHash} node={node} sphereHash={sphereHash} now={now} />
        ))}
      </div>
    </section>
  );
}

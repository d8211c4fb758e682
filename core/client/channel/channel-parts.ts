import type { ChannelEngine } from "./channel-engine.ts";
import type { EngineContext } from "./engine-context.ts";
import type { EpochManager } from "./epoch-manager.ts";

/** The per-channel engine: timelines, epochs and every protocol v2 check. */
export interface ChannelParts {
  channels: ChannelEngine;
  epochs: EpochManager;
}

/**
 * Loads the per-channel engine on first use. A browser page that shows the board but no channel yet
 * does not download it (it is most of the client's code and crypto); bundlers split it at this
 * dynamic import. Node, Bun and the CLI just resolve the modules.
 */
export async function loadChannelParts(engine: EngineContext): Promise<ChannelParts> {
  const [{ EpochManager }, { ChannelEngine }] = await Promise.all([
    import("./epoch-manager.ts"),
    import("./channel-engine.ts"),
  ]);
  const epochs = new EpochManager(engine);
  return { epochs, channels: new ChannelEngine(engine, epochs) };
}

import { DAY_MS } from "./display.ts";

/**
 * The FOREST's hard-coded placeholder data (spec §1, §2.14): the community side has no backend yet.
 * Every date is an offset from a clock (`now`), so the page always shows a spread of ages and a test
 * can fix the clock; every sync count is random within a band, so each card keeps its box count.
 */
export interface ForestNode {
  title: string;
  /** The node code shown on the card. */
  code: string;
  /** The node's hash in `/{sphereHash}/{nodeHash}`. */
  nodeHash: string;
  /** Discussion threads under the node. */
  discuss: string[];
  createdAt: string;
  syncCount: number;
}

interface Seed {
  title: string;
  code: string;
  nodeHash: string;
  discuss: string[];
  ageMs: number;
  /** Inclusive band of the random sync count. */
  syncs: readonly [number, number];
}

const HOUR_MS = 3_600_000;

export const FOREST_SEEDS: readonly Seed[] = [
  {
    title: "Whispers under the canopy",
    code: "ND-0x01A7",
    nodeHash: "aaaacanopy2ndone",
    discuss: ["first light", "who listens?"],
    ageMs: 3 * HOUR_MS,
    syncs: [0, 2],
  },
  {
    title: "Roots of trust",
    code: "ND-0x02B3",
    nodeHash: "aaaaroots2ndtwoo",
    discuss: ["key signing", "web of roots", "pinning"],
    ageMs: 4 * DAY_MS + HOUR_MS,
    syncs: [3, 8],
  },
  {
    title: "Shadows that speak",
    code: "ND-0x03C9",
    nodeHash: "aaashadows2three",
    discuss: ["anonymity", "voices"],
    ageMs: 6 * DAY_MS,
    syncs: [9, 26],
  },
  {
    title: "Decentralized voices",
    code: "ND-0x04D2",
    nodeHash: "aaaavoices2nfour",
    discuss: ["relays", "federation", "mirrors", "gossip"],
    ageMs: 11 * DAY_MS,
    syncs: [27, 80],
  },
  {
    title: "Encrypted silence",
    code: "ND-0x05E4",
    nodeHash: "aaasilence2nfive",
    discuss: ["forward secrecy"],
    ageMs: 45 * DAY_MS,
    syncs: [81, 242],
  },
  {
    title: "The old growth",
    code: "ND-0x06F6",
    nodeHash: "aaaoldgrowth2six",
    discuss: ["archives", "what the forest remembers"],
    ageMs: 400 * DAY_MS,
    syncs: [9, 26],
  },
];

/** The six placeholder nodes as of `now`; `random` (0 ≤ r < 1) picks each sync count in its band. */
export function forestNodes(now: number, random: () => number = Math.random): ForestNode[] {
  return FOREST_SEEDS.map(({ ageMs, syncs: [low, high], ...node }) => ({
    ...node,
    discuss: [...node.discuss],
    createdAt: new Date(now - ageMs).toISOString(),
    syncCount: low + Math.floor(random() * (high - low + 1)),
  }));
}

/**
 * Community paths (spec §2.1; docs/decisions/community-routes.md). `/community` and everything under
 * it is COMMUNITY HOME; `/{sphereHash}` is the FOREST and `/{sphereHash}/{nodeHash}` the NODE VIEW,
 * where both hashes are 16 characters of lowercase base32 (the shape of channel ids). Named routes are
 * matched before these, so they always win.
 */
export const HASH_PATTERN = /^[a-z2-7]{16}$/;

export const isCommunityHash = (segment: string): boolean => HASH_PATTERN.test(segment);

export type CommunityView =
  | { view: "home" }
  | { view: "forest"; sphereHash: string }
  | { view: "node"; sphereHash: string; nodeHash: string };

/** The community view at `path` (no trailing slash), or null when it is not a community path. */
export function communityView(path: string): CommunityView | null {
  if (path === "/community" || path.startsWith("/community/")) return { view: "home" };
  const segments = path.split("/").slice(1);
  const [sphereHash, nodeHash] = segments;
  if (!sphereHash || !isCommunityHash(sphereHash) || segments.length > 2) return null;
  if (nodeHash === undefined) return { view: "forest", sphereHash };
  return isCommunityHash(nodeHash) ? { view: "node", sphereHash, nodeHash } : null;
}

/** The placeholder sphere COMMUNITY HOME leads into. */
export const DEMO_SPHERE = "shadowgrove2fst7";

/** What the badge says to a screen reader and on hover (docs/atproto.md "The badge"). */
export const ATPROTO_BADGE_LABEL =
  "Signed in with ATProto: this name is their ATProto handle, checked with their own PDS";

/**
 * The small mark beside the name of an account signed in with ATProto (Member.atproto): its handle
 * is the one its DID document names, not one this server gave out.
 */
export function AtprotoBadge() {
  return (
    <span className="atproto-badge" role="img" title={ATPROTO_BADGE_LABEL} aria-label={ATPROTO_BADGE_LABEL}>
      AT
    </span>
  );
}

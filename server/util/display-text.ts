/**
 * Characters that change how text is shown without being seen: Unicode format characters (Cf:
 * bidirectional overrides, embeddings and isolates, zero-width characters and joiners, the byte-order
 * mark, soft hyphens) and controls (Cc). In a channel name they let one name pass for another
 * ("#general" shown for a different channel), so names and descriptions are stored without them.
 * Line breaks and tabs in descriptions are kept.
 */
const INVISIBLE = /(?![\n\t])[\p{Cc}\p{Cf}]/gu;

export function cleanDisplayText(text: string): string {
  return text.replace(INVISIBLE, "");
}

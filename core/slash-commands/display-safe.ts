// Control characters (C0, DEL, C1) and bidirectional overrides. Matches one UTF-16 unit each.
const unsafe = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * Channel names and handles come from other users. Before they reach a terminal, escape sequences
 * could repaint the CLI's screen and bidi overrides could make one name pose as another, so each
 * such character becomes U+FFFD. One unit in, one unit out: highlight ranges stay valid.
 */
export function displaySafe(text: string): string {
  return text.replace(unsafe, "\ufffd");
}

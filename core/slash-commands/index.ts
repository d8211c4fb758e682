export { create } from "./create.ts";
export { commandWord } from "./define.ts";
export { displaySafe } from "./display-safe.ts";
export { CHANNEL_CREATED, performSlash, type SlashHost, slashEffects } from "./effects.ts";
export { help } from "./help.ts";
export { helpLines, helpText } from "./help-text.ts";
export { join, joinCommandFor } from "./join.ts";
export { type ChannelListing, type ChannelListLine, formatChannelList, list } from "./list.ts";
export {
  isUnlockedFlag,
  normalizeAnswer,
  PUZZLE_QUESTION,
  SECRET_PHRASES,
  TERMINAL_UNLOCKED_KEY,
  TERMINAL_UNLOCKED_VALUE,
  tryUnlock,
  UNLOCK_MIN_PARTIAL_LENGTH,
} from "./lock.ts";
export { msg, query } from "./msg.ts";
export { commands, findCommand, isCommandLine, parseCommandLine, tokenize } from "./registry.ts";
export { reset } from "./reset.ts";
export {
  type ChannelMatch,
  type HighlightRange,
  highlightSegments,
  NO_MATCHES_HINT,
  noMatchesText,
  search,
  searchChannels,
  type TextSegment,
} from "./search.ts";
export { formatStatus, type StatusInput, status } from "./status.ts";
export { interpretTerminalInput, type TerminalAction, type TerminalInput } from "./terminal.ts";
export * from "./types.ts";

import { defineCommand } from "./define.ts";
import type { ResetCommand } from "./types.ts";

/** The caller removes the unlock flag from local storage and shows the puzzle again (spec §4.6). */
export const reset = defineCommand<ResetCommand>({
  name: "reset",
  aliases: [],
  arguments: [],
  usage: "/wsync/reset",
  summary: "lock the terminal and go back to the riddle",
  // The CLI's screen has no lock (it is already behind your login): there it clears the output.
  cliSummary: "clear the output",
  details: [],
  parse: () => ({ name: "reset" }),
});

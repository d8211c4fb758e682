import { lazyPart } from "../../../components/lazy-part.tsx";

/**
 * Files in the board (issue 31): a file message's attachment (`item`) or the panel of files about to
 * be sent (`channelId`, `files`). All of it (the panel, image work, thumbnails, the crypto of files)
 * loads when a file message is shown or a file is picked, dropped or pasted, never with /sync: one
 * part for both, to keep the page's first script small.
 */
export const Files = lazyPart(() => import("./files-ui.tsx").then((m) => m.Files), "the file");

// A file's JSON shape and text in the CLI's rows are core's (core/export/file-rows.ts), shared with
// the browser's export.
export { type FileJson, fileJson, fileText, sizeText } from "../core/export/file-rows.ts";

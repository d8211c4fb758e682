import type { ComponentProps } from "react";
import { FileAttachment } from "./FileAttachment.tsx";
import { FileSend } from "./FileSend.tsx";

/** What lazy.tsx loads: an attachment for `item`, else the send panel. */
export function Files(p: ComponentProps<typeof FileAttachment> | ComponentProps<typeof FileSend>) {
  return "item" in p ? <FileAttachment {...p} /> : <FileSend {...p} />;
}

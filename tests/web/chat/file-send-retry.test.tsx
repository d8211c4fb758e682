/**
 * The file panel's Retry (issue 31): once a send's automatic resumption gave up on a lost
 * connection, the panel shows the error with Retry, and Retry runs the same FileSendJob again, so
 * the upload resumes under the same blob and message id (no second blob, no second message). A
 * refusal (a 4xx such as the size limit) shows no Retry. The job is the real one
 * (core/client/files/send-file.ts) over a scripted BlobClient.
 */
import "../dom.ts";
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { BlobClient, UploadInput } from "../../../core/client/files/blob-client.ts";
import { FileSendJob, type SendFileInput } from "../../../core/client/files/send-file.ts";
import { NetworkError } from "../../../core/client/net/api.ts";
import type { TimelineItem } from "../../../core/client/view/state.ts";
import type { FilePlaintext } from "../../../core/crypto/file-message.ts";
import { ApiError } from "../../../core/protocol/runtime.ts";
import { FileSend, FileSendText } from "../../../web/features/chat/files/FileSend.tsx";
import { click, type FakeClient, installFakeClient, type Mounted, mount, settle } from "../harness.ts";
import { resetChat } from "./fixtures.ts";

let ui: Mounted;
let fake: FakeClient;

beforeEach(() => {
  resetChat();
  fake = installFakeClient();
});
afterEach(async () => {
  await ui?.unmount();
});

/**
 * A BlobClient whose uploads answer from `script` in turn ("lost": the blob is made, then the
 * connection is lost; "refused": a 413; "ok": done), recording the blob id each upload resumed.
 */
function scripted(script: ("lost" | "refused" | "ok")[]) {
  const resumedFrom: (string | undefined)[] = [];
  let made = 0;
  const blobs = {
    async upload(input: UploadInput, blobId?: string) {
      resumedFrom.push(blobId);
      const step = script.shift();
      const id = blobId ?? `blob${++made}`;
      if (!blobId) input.onCreated?.(id);
      if (step === "lost") throw new NetworkError("network error: connection reset");
      if (step === "refused") throw new ApiError("TooLarge", "File is larger than the 25 MB limit");
      input.onProgress?.(100, 100);
      return { blobId: id, cipherSize: 100 };
    },
  } as unknown as BlobClient;
  return { blobs, resumedFrom, made: () => made };
}

function withFiles(blobs: BlobClient) {
  const jobs: FileSendJob[] = [];
  const sent: { clientMsgId: string; body: FilePlaintext }[] = [];
  fake.impl.files = async () => ({
    blobs,
    job: (_channelId: string, input: SendFileInput) => {
      // No automatic pauses: the job gives up at the first loss, as it does after ~2 minutes.
      const j = new FileSendJob(
        blobs,
        async (clientMsgId, body) => {
          sent.push({ clientMsgId, body });
          return {} as TimelineItem;
        },
        "at://did:plc:oooooooooooooooooooooooo/chat.wsync.channel/aaaaaaaaaaaaaaab",
        input,
        [],
      );
      jobs.push(j);
      return j;
    },
  });
  return { jobs, sent };
}

const retryButton = () =>
  [...document.querySelectorAll("button")].find((b) => b.textContent === FileSendText.retry) ?? null;
const sendButton = () =>
  [...document.querySelectorAll("button")].find((b) => b.textContent === "Send") ?? null;

test("after the automatic resumption gives up, Retry resumes the same upload and sends one message", async () => {
  const { blobs, resumedFrom, made } = scripted(["lost", "ok"]);
  const { jobs, sent } = withFiles(blobs);
  let closed = 0;
  const file = new File([new Uint8Array(1000)], "notes.bin", { type: "application/octet-stream" });
  ui = await mount(<FileSend channelId="aaaaaaaaaaaaaaab" files={[file]} onClose={() => closed++} />);
  await click(sendButton());
  await settle(10);
  expect(ui.$('[role="alert"]')?.textContent).toContain("network error");
  expect(retryButton()).not.toBeNull();
  expect(sent.length).toBe(0);
  await click(retryButton());
  await settle(10);
  // The same job ran again: it resumed blob1 (the blob the lost attempt made), made no other.
  expect(jobs.length).toBe(1);
  expect(resumedFrom).toEqual([undefined, "blob1"]);
  expect(made()).toBe(1);
  expect(sent.length).toBe(1);
  expect(sent[0]?.clientMsgId).toBe(jobs[0]?.clientMsgId as string);
  expect(sent[0]?.body.file?.blob).toBe("blob1");
  expect(closed).toBe(1);
});

test("a refusal (the size limit) shows the server's words and no Retry", async () => {
  const { blobs } = scripted(["refused"]);
  withFiles(blobs);
  const file = new File([new Uint8Array(10)], "big.bin", { type: "application/octet-stream" });
  ui = await mount(<FileSend channelId="aaaaaaaaaaaaaaab" files={[file]} onClose={() => undefined} />);
  await click(sendButton());
  await settle(10);
  expect(ui.$('[role="alert"]')?.textContent).toBe("File is larger than the 25 MB limit");
  expect(retryButton()).toBeNull();
});

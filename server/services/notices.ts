import { type NotifyAction, WsEvent } from "../../core/protocol/index.ts";
import { type Bus, frame } from "../realtime/bus.ts";
import type { ChannelRow, Storage } from "../storage/types.ts";
import type { Clock } from "../util/clock.ts";
import { newRkey } from "../util/ids.ts";
import { toNotifyRecord, uriOf } from "./records.ts";

/** Writes a notification record into the channel's timeline, then tells the channel's subscribers. */
export class Notices {
  constructor(
    private readonly storage: Storage,
    private readonly bus: Bus,
    private readonly clock: Clock,
  ) {}

  async post(
    channel: ChannelRow,
    subject: { did: string; handle: string },
    action: NotifyAction,
  ): Promise<void> {
    const now = this.clock.now();
    const row = await this.storage.timeline.appendNotify({
      channelId: channel.id,
      rkey: newRkey(now),
      subjectDid: subject.did,
      subjectHandle: subject.handle,
      action,
      createdAt: now,
    });
    await this.bus.publish({
      kind: "channel",
      channelId: channel.id,
      frame: frame(WsEvent.notifyJoined, { record: toNotifyRecord(row, uriOf(channel)) }),
    });
  }
}

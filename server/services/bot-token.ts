/**
 * What a bot token reaches once checked (docs/decisions/bot-tokens.md). Its own module, without
 * imports, so auth-service.ts can name it without a cycle through bot-service.ts.
 */
export interface BotScope {
  id: string;
  ownerDid: string;
  channelIds: ReadonlySet<string>;
}

/** Whether a bearer credential is a bot token (`wsb_…`) rather than a JWT. */
export const isBotToken = (token: string): boolean => token.startsWith("wsb_");

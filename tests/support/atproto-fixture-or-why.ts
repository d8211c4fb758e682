import { type AtprotoFixture, startAtprotoFixture } from "../../fixtures/atproto/start.ts";
import { CHROMIUM_PATH, hasChromium } from "../e2e/browser.ts";

/**
 * The offline PLC directory and PDS for a test file that also drives Chromium, or why its tests do
 * not run (the fixture not installed, or no Chromium): said once as a warning naming `what`.
 */
export async function atprotoFixtureOrWhy(
  what: string,
  opts: Parameters<typeof startAtprotoFixture>[0] = {},
): Promise<{ fixture: AtprotoFixture | null; why: string }> {
  let fixture: AtprotoFixture | null = null;
  let why = "";
  try {
    fixture = await startAtprotoFixture({ log: (m) => console.log(m), ...opts });
  } catch (e) {
    why = (e as Error).message;
  }
  if (!hasChromium()) why ||= `no Chromium at ${CHROMIUM_PATH}`;
  if (why) console.warn(`${what} NOT RUN: ${why}`);
  return { fixture, why };
}

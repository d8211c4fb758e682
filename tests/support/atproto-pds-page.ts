import type { Page } from "playwright-core";

/**
 * Signs in at the PDS's own sign-in page (fixtures/atproto) and accepts its consent page when it
 * asks (a PDS that remembers an earlier consent for this client skips it); resolves once the
 * browser has left the PDS, with the URL it went to.
 */
export async function signInAtPdsPage(page: Page, url: string, password: string): Promise<string> {
  const pds = new URL(url).origin;
  await page.goto(url);
  await page.locator('input[type="password"]').fill(password);
  await page.locator('form button[type="submit"]').click();
  const consent = page.getByRole("button", { name: /accept|authorize|allow/i });
  const left = page.waitForURL((u) => u.origin !== pds, { timeout: 60_000 });
  const asked = consent.waitFor({ timeout: 60_000 }).then(() => true);
  if (await Promise.race([left.then(() => false), asked.catch(() => false)])) await consent.click();
  await left;
  return page.url();
}

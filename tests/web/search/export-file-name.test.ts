/**
 * Issue 32: the info panel's export names its download after the channel and the day, with only
 * characters every file system accepts (a channel name is anyone's text).
 */
import { expect, test } from "bun:test";
import { exportFileName } from "../../../web/features/search/export-channel.ts";

const day = new Date(2026, 10, 27, 12, 0);

test("the channel's name and the local day, made safe for a file name", () => {
  expect(exportFileName("ops", "json", day)).toBe("ops-2026-11-27.json");
  expect(exportFileName("café-crew", "html", day)).toBe("café-crew-2026-11-27.html");
  expect(exportFileName("../../etc/passwd", "txt", day)).toBe("etc-passwd-2026-11-27.txt");
  expect(exportFileName('a/b\\c:d*e?"f<g>|h', "txt", day)).toBe("a-b-c-d-e-f-g-h-2026-11-27.txt");
  expect(exportFileName("...", "json", day)).toBe("channel-2026-11-27.json");
  expect(exportFileName("\u202Eevil\u0000", "json", day)).toBe("evil-2026-11-27.json");
  expect(exportFileName("x".repeat(300), "json", day)).toBe(`${"x".repeat(80)}-2026-11-27.json`);
});

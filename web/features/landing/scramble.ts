import { useCallback, useEffect, useRef, useState } from "react";
import { LANDING } from "./constants.ts";

/**
 * One frame of a scramble: letters before `resolved` show the real text, the rest random symbols
 * (spaces stay spaces, so the shape of the words holds).
 */
export function scrambleFrame(text: string, resolved: number, random: () => number = Math.random): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? "";
    if (i < resolved || ch === " ") out += ch;
    else out += LANDING.scrambleChars[Math.floor(random() * LANDING.scrambleChars.length)] ?? ch;
  }
  return out;
}

/**
 * A scrambled-text effect: `run()` scrambles the text and settles it letter by letter, one every
 * `letterMs`. The server render and the first client render show the real text (hydration matches);
 * with `disabled` (reduced motion) run() does nothing.
 */
export function useScramble(
  text: string,
  opts: { letterMs?: number; disabled?: boolean; autoStart?: boolean } = {},
): [string, () => void] {
  const letterMs = opts.letterMs ?? LANDING.scrambleLetterMs;
  const [shown, setShown] = useState(text);
  const timer = useRef<ReturnType<typeof setInterval> | null>(null);
  const disabled = opts.disabled ?? false;
  const autoStart = opts.autoStart ?? false;

  const stop = useCallback(() => {
    if (timer.current !== null) clearInterval(timer.current);
    timer.current = null;
  }, []);

  const run = useCallback(() => {
    if (disabled) return;
    stop();
    const start = Date.now();
    setShown(scrambleFrame(text, 0));
    timer.current = setInterval(() => {
      const resolved = Math.floor((Date.now() - start) / letterMs);
      if (resolved >= text.length) {
        stop();
        setShown(text);
      } else setShown(scrambleFrame(text, resolved));
    }, LANDING.scrambleFrameMs);
  }, [text, letterMs, disabled, stop]);

  useEffect(() => {
    if (autoStart) run();
    return stop;
  }, [autoStart, run, stop]);

  useEffect(() => {
    if (disabled) {
      stop();
      setShown(text);
    }
  }, [disabled, text, stop]);

  return [shown, run];
}

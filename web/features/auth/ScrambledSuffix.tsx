import { useEffect, useState } from "react";

const SYMBOLS = "!<>-_\\/[]{}—=+*^?#________";

/** Spec §2.4 / §9: the handle suffix scrambles every 60 ms for 10 steps, then settles. */
export function ScrambledSuffix({ suffix }: { suffix: string }) {
  const [shown, setShown] = useState(suffix);
  useEffect(() => {
    let step = 0;
    const timer = setInterval(() => {
      step++;
      if (step >= 10) {
        setShown(suffix);
        clearInterval(timer);
        return;
      }
      const settled = Math.floor((suffix.length * step) / 10);
      setShown(
        suffix.slice(0, settled) +
          Array.from(suffix.slice(settled), () => SYMBOLS[Math.floor(Math.random() * SYMBOLS.length)]).join(
            "",
          ),
      );
    }, 60);
    return () => clearInterval(timer);
  }, [suffix]);
  return (
    <span className="handle-suffix">
      <span aria-hidden="true">{shown}</span>
      <span className="visually-hidden">{suffix}</span>
    </span>
  );
}

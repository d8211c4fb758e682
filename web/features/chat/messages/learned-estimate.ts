import { measureElement, type Virtualizer } from "@tanstack/react-virtual";
import { useCallback, useRef } from "react";

/** A row's height before it is measured (one line of text), until the list has learned it. */
export const ESTIMATE_PX = 26;
/** How many rows are measured before the most common height among them becomes the estimate. */
const LEARN_ROWS = 20;

/**
 * The rows' height before they are measured, learned from the first LEARN_ROWS measured (the most
 * common height among them: a one-line message in this browser's fonts and zoom). A row whose
 * estimate was right changes nothing when it is measured; a wrong one moves the rows below it and,
 * above the viewport, the scroll position, and the virtualizer then works out every row's position
 * again for each further row of the batch: with a page going in above a 10,000-row list, up to 35 ms
 * of one frame (issue 28, BENCH_LOAF=1).
 */
export function useLearnedEstimate() {
  const learned = useRef({ size: ESTIMATE_PX, counts: new Map<number, number>(), n: 0 });
  const estimateSize = useCallback(() => learned.current.size, []);
  const measure = useCallback(
    (el: Element, entry: ResizeObserverEntry | undefined, v: Virtualizer<HTMLDivElement, Element>) => {
      const size = measureElement(el, entry, v);
      const l = learned.current;
      if (l.n < LEARN_ROWS && size > 0) {
        l.counts.set(size, (l.counts.get(size) ?? 0) + 1);
        if (++l.n === LEARN_ROWS) {
          let best = 0;
          for (const [h, c] of l.counts) if (c > best) [best, l.size] = [c, h];
        }
      }
      return size;
    },
    [],
  );
  return { estimateSize, measureElement: measure };
}

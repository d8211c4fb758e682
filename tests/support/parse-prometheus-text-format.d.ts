/** The parser used by tests/server/ops-metrics.test.ts ships no types; what the test reads of it. */
declare module "parse-prometheus-text-format" {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}

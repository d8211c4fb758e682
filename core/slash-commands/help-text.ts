import { commands } from "./registry.ts";
import type { CommandName } from "./types.ts";

const indent = "  ";

/**
 * The help screen, one string per line, shared by the web terminal and the CLI. Without a topic it
 * lists every command; with one it explains that command and its arguments.
 */
export function helpLines(topic: CommandName | null = null, screen: "web" | "cli" = "web"): string[] {
  const spec = topic === null ? undefined : commands.find((c) => c.name === topic);
  const summary = (c: (typeof commands)[number]) =>
    screen === "cli" ? (c.cliSummary ?? c.summary) : c.summary;
  if (!spec) {
    const width = Math.max(...commands.map((c) => c.usage.length)) + 2;
    return [
      "COMMANDS",
      ...commands.map((c) => `${indent}${c.usage.padEnd(width)}${summary(c)}`),
      "",
      "/help works too. /wsync/help <command> explains one command.",
    ];
  }
  const width = Math.max(0, ...spec.arguments.map((a) => a.name.length)) + 2;
  return [
    spec.usage,
    `${indent}${summary(spec)}`,
    ...spec.arguments.map(
      (a) => `${indent}${a.name.padEnd(width)}${a.required ? "" : "(optional) "}${a.description}`,
    ),
    ...spec.details.map((d) => `${indent}${d}`),
    ...(spec.aliases.length > 0 ? [`${indent}also: ${spec.aliases.join(", ")}`] : []),
  ];
}

export function helpText(topic: CommandName | null = null): string {
  return helpLines(topic).join("\n");
}

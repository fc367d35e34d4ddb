// Risk classes: what kind of harm a tool call can do, read from its metadata `category`.
//
// One idea: the class is a closed vocabulary and anything outside it is `unknown`, which
// every mode treats at least as carefully as the riskiest known class. A tool that forgets
// its category, or misspells it, must never become a read by accident.
import type { ToolMetadata } from '../engine/index.js';

const RISK_CLASSES = ['read', 'write', 'exec', 'external'] as const;
type RiskClass = (typeof RISK_CLASSES)[number];

/** How each class is explained to the person reading an approval card. */
const MEANING: Record<RiskClass, string> = {
  read: 'only reads',
  write: 'changes files in the workspace',
  exec: 'runs shell commands',
  external: 'reaches the network or other channels',
};

export type ClassifiedTool =
  | { riskClass: RiskClass }
  /** `category` is what the tool declared, if anything (for the explanation). */
  | { riskClass: 'unknown'; category: string | undefined };

export function classifyTool(metadata: ToolMetadata | undefined): ClassifiedTool {
  const category = metadata?.category;
  if (category !== undefined && (RISK_CLASSES as readonly string[]).includes(category)) {
    return { riskClass: category as RiskClass };
  }
  return { riskClass: 'unknown', category };
}

/**
 * The predicate of a sentence about the tool: "is exec-risk (runs shell commands)", or why
 * an unknown tool counts as risky. Callers put the tool's name (or "it") in front.
 */
export function describeRisk(classified: ClassifiedTool): string {
  if (classified.riskClass !== 'unknown') {
    return `is ${classified.riskClass}-risk (${MEANING[classified.riskClass]})`;
  }
  return classified.category === undefined
    ? 'declares no risk class, so it is treated as risky'
    : `has an unrecognised risk class "${classified.category}", so it is treated as risky`;
}

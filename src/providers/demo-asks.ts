// What the person asked the demo model for, read from their words (demo-script.ts picks the
// scene). No AI: patterns, kept strict on purpose. A newcomer's reply that merely holds a word
// ("concatenate", "I am running late", "what command did you use?", "don't run anything") must
// not become a proposal to run a command: only a plain request does ("shell", "run a command",
// "run ls", a message that starts with `ls` or `cat`). A request said in the negative ("no,
// don't write the file") is no request.
//
// Steers are replies about the answer just given ("make it short", "as a list", "never mind"):
// the demo follows them, so a reply sent while it writes visibly changes what comes next.

/** What a message asks the demo to do, if it is one of its scenes. */
export type DemoAsk = 'file' | 'shell' | 'story';
/** How a reply steers the last answer. */
export type DemoSteer = 'shorter' | 'list' | 'cancel';

/** A message that starts with a command the demo runs: "ls -la", "cat the note" (a request for the command, whatever it names). */
const COMMAND_FIRST = /^(?:please\s+)?(?:ls|cat)\b/i;

const ASKS: Record<DemoAsk, RegExp[]> = {
  file: [/\b(?:files?|notes?)\b/i],
  shell: [
    // The word the demo's own menu offers, "shell command" included.
    /\bshell\b/i,
    // A message that is a command: "ls", "ls -la", "cat the note".
    COMMAND_FIRST,
    // "run a command", "please run the command", "execute ls", "run `cat demo-note.md`".
    /\b(?:run|execute)\s+(?:(?:a|an|the|this|that|some|one|another|my)\s+)?(?:commands?\b|`?(?:ls|cat)\b)/i,
    // "show it with a command".
    /\b(?:with|via|using)\s+(?:a|the)\s+command\b/i,
  ],
  story: [/\b(?:long|story)\b/i],
};

const STEERS: Record<DemoSteer, RegExp> = {
  shorter:
    /\b(?:shorter|too long|tl;?dr|short version|(?:make|keep)\s+(?:it|that|this|the\s+\w+)\s+(?:short|shorter|brief)|summari[sz]e\s+(?:it|that)|in\s+(?:one|a)\s+(?:line|sentence))\b/i,
  list: /\b(?:as\s+(?:a\s+)?(?:list|bullets|bullet\s+points)|in\s+bullet\s+points|bullet(?:ed)?\s+list|list\s+(?:it|them))\b/i,
  cancel: /^(?:never\s*mind|cancel|forget\s+it|skip\s+it|stop)\b/i,
};

/**
 * "don't", "do not", "never", "no", "not", "without": a request after one of these in its
 * clause is not made. "No," at a clause's start answers the last message ("no, use the shell")
 * and negates nothing after it.
 */
const NEGATION = /\b(?:don'?t|do\s+not|never|not|without|stop|no(?![,.!]))\b/gi;

/** Whether the person asks for this scene, in a clause that does not say it in the negative. */
export function asksFor(said: string, ask: DemoAsk): boolean {
  return clauses(said).some((clause) =>
    ASKS[ask].some((pattern) => {
      const match = pattern.exec(clause);
      return match !== null && !negatedBefore(clause, match.index);
    }),
  );
}

/** Whether the message is a command to run ("cat the note" asks for `cat`, not for the note to be written). */
export function isCommand(said: string): boolean {
  return COMMAND_FIRST.test(said.trim());
}

/** How the reply steers the last answer, when it is one of the steers the demo knows. */
export function steerOf(said: string): DemoSteer | undefined {
  const text = said.trim().replace(/^(?:actually|ok(?:ay)?|no|please|hm+|wait)[,.!\s]+/i, '');
  for (const steer of ['cancel', 'shorter', 'list'] as const) if (STEERS[steer].test(text)) return steer;
  return undefined;
}

/** A sentence or a line: a negation holds only in its own clause ("No. Run ls." still asks). */
function clauses(text: string): string[] {
  return text
    .split(/[.!?;\n]+/)
    .map((clause) => clause.trim())
    .filter(Boolean);
}

function negatedBefore(clause: string, at: number): boolean {
  for (const match of clause.matchAll(NEGATION)) if (match.index < at) return true;
  return false;
}

// What FakeSlack refuses in a message's `context_actions` blocks and in a modal's inputs, as
// Slack does (docs.slack.dev: context actions block, feedback buttons element, plain-text
// input element, modal view): kept out of slack-server.ts, which only calls these. Slack
// answers a bad block with `invalid_blocks` and one line per problem naming where it is.
//
// context_actions: 1 to 5 elements, each a `feedback_buttons` or an `icon_button`; a block_id
// of at most 255 characters. feedback_buttons: an action_id of at most 255, and both buttons,
// each with a plain_text text of 1 to 75 characters, a value of 1 to 2,000 and an optional
// accessibility_label of at most 75. A context_actions block is for messages only: a modal
// with one is refused. A modal with an input block needs a submit button; an input's label is
// plain text of at most 2,000 characters, and a plain_text_input's max_length at most 3,000.

type Block = { type?: unknown; block_id?: unknown; elements?: unknown; element?: unknown; label?: unknown };

const BUTTON_TEXT = 75;
const BUTTON_VALUE = 2000;
const ACTION_ID = 255;
const BLOCK_ID = 255;
const CONTEXT_ACTIONS_ELEMENTS = 5;

/** Problems with the `context_actions` blocks of a message's `blocks` (`where`: the json-pointer prefix). */
export function contextActionsProblems(blocks: unknown[] | undefined, where = '/blocks'): string[] {
  const problems: string[] = [];
  (blocks ?? []).forEach((raw, i) => {
    const block = (raw ?? {}) as Block;
    if (block.type !== 'context_actions') return;
    const at = `${where}/${i}`;
    if (typeof block.block_id === 'string' && block.block_id.length > BLOCK_ID)
      problems.push(`must be less than ${BLOCK_ID + 1} characters [json-pointer:${at}/block_id]`);
    const elements = block.elements;
    if (!Array.isArray(elements) || elements.length === 0)
      return problems.push(`must provide at least 1 element [json-pointer:${at}/elements]`);
    if (elements.length > CONTEXT_ACTIONS_ELEMENTS)
      problems.push(`no more than ${CONTEXT_ACTIONS_ELEMENTS} items allowed [json-pointer:${at}/elements]`);
    elements.forEach((element: Record<string, unknown> | null, j) => {
      const here = `${at}/elements/${j}`;
      const type = element?.type;
      if (type === 'icon_button') return;
      if (type !== 'feedback_buttons')
        return problems.push(`must be one of feedback_buttons, icon_button [json-pointer:${here}/type]`);
      const actionId = element!.action_id;
      if (actionId !== undefined && (typeof actionId !== 'string' || actionId.length > ACTION_ID))
        problems.push(`must be a string of at most ${ACTION_ID} characters [json-pointer:${here}/action_id]`);
      for (const side of ['positive_button', 'negative_button'] as const)
        problems.push(...feedbackButtonProblems(element![side], `${here}/${side}`));
    });
  });
  return problems;
}

function feedbackButtonProblems(raw: unknown, at: string): string[] {
  if (raw === null || typeof raw !== 'object') return [`must provide an object [json-pointer:${at}]`];
  const button = raw as { text?: { type?: unknown; text?: unknown }; value?: unknown; accessibility_label?: unknown };
  const problems: string[] = [];
  const text = button.text?.text;
  if (button.text?.type !== 'plain_text') problems.push(`must be a plain_text object [json-pointer:${at}/text]`);
  if (typeof text !== 'string' || text.length === 0 || text.length > BUTTON_TEXT)
    problems.push(`must be 1 to ${BUTTON_TEXT} characters [json-pointer:${at}/text/text]`);
  if (typeof button.value !== 'string' || button.value.length === 0 || button.value.length > BUTTON_VALUE)
    problems.push(`must be 1 to ${BUTTON_VALUE} characters [json-pointer:${at}/value]`);
  const label = button.accessibility_label;
  if (label !== undefined && (typeof label !== 'string' || label.length > BUTTON_TEXT))
    problems.push(`must be at most ${BUTTON_TEXT} characters [json-pointer:${at}/accessibility_label]`);
  return problems;
}

/** Problems with a modal's input blocks (and a context_actions block, which a modal may not hold). */
export function modalInputProblems(view: Record<string, unknown>): string[] {
  const blocks = Array.isArray(view.blocks) ? (view.blocks as Block[]) : [];
  const problems: string[] = [];
  blocks.forEach((block, i) => {
    const at = `/view/blocks/${i}`;
    if (block?.type === 'context_actions')
      problems.push(`context_actions is not allowed in a modal [json-pointer:${at}/type]`);
    if (block?.type !== 'input') return;
    if (view.submit === undefined)
      problems.push('a view with input blocks must have a submit button [json-pointer:/view/submit]');
    const label = (block.label ?? {}) as { type?: unknown; text?: unknown };
    if (
      label.type !== 'plain_text' ||
      typeof label.text !== 'string' ||
      label.text.length === 0 ||
      label.text.length > 2000
    )
      problems.push(`must be a plain_text of 1 to 2000 characters [json-pointer:${at}/label]`);
    const element = (block.element ?? {}) as { type?: unknown; max_length?: unknown; action_id?: unknown };
    if (typeof element.type !== 'string') problems.push(`must provide an element [json-pointer:${at}/element]`);
    if (
      element.type === 'plain_text_input' &&
      element.max_length !== undefined &&
      (typeof element.max_length !== 'number' || element.max_length > 3000)
    ) {
      problems.push(`must be at most 3000 [json-pointer:${at}/element/max_length]`);
    }
  });
  return [...new Set(problems)];
}

/** Slack's answer to a message whose blocks it refuses. */
export function invalidBlocks(problems: string[]): {
  ok: false;
  error: string;
  errors: string[];
  response_metadata: { messages: string[] };
} {
  return {
    ok: false,
    error: 'invalid_blocks',
    errors: problems,
    response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) },
  };
}

// What Discord refuses in what a bot sends, in one place: the limits table (content 2,000
// characters, 5 action rows of 5 buttons, custom_id 1–100, components v2 at most 40 components
// and 4,000 characters of text, thread names 1–100…) and the validators that turn a breach
// into Discord's own answer (50035 "Invalid Form Body" with the field path and error code, or
// 50006 "Cannot send an empty message"), so a connector's splitting and truncating can be
// tested against the errors it would meet in production. `DiscordApiError` is how every fake
// module says "Discord refuses this".

/** What Discord answers when it refuses a request: `{ message, code, errors? }` with an HTTP status. */
export class DiscordApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: Record<string, unknown>,
  ) {
    super(message);
  }

  get body(): { message: string; code: number; errors?: Record<string, unknown> } {
    return { message: this.message, code: this.code, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

/** Discord's 50035 "Invalid Form Body", with one error at a dotted path (`content`, `components.0.components.1.custom_id`). */
export function invalidFormBody(path: string, code: string, message: string): DiscordApiError {
  const errors: Record<string, unknown> = {};
  let node = errors;
  const parts = path.split('.');
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 1) node[part] = { _errors: [{ code, message }] };
    else node = node[part] = {};
  }
  return new DiscordApiError(400, 50035, 'Invalid Form Body', errors);
}

export const unknownChannel = (): DiscordApiError => new DiscordApiError(404, 10003, 'Unknown Channel');
export const unknownMessage = (): DiscordApiError => new DiscordApiError(404, 10008, 'Unknown Message');

export interface AllowedMentions {
  parse?: ('users' | 'roles' | 'everyone')[];
  users?: string[];
  roles?: string[];
  replied_user?: boolean;
}

/**
 * Discord's limits the fake enforces, in one table. Sources: developers/resources/message.mdx,
 * components/reference.mdx, interactions/receiving-and-responding.mdx, in Discord's
 * developer documentation.
 */
export const DISCORD_LIMITS = {
  /** A file a bot uploads, in a server without boosts (and in DMs): 10 MiB since 2024. */
  uploadBytes: 10 * 1024 * 1024,
  contentChars: 2000,
  /** A message nonce (a string; Discord also takes an integer). */
  nonceChars: 25,
  /** How long `enforce_nonce` remembers a nonce: Discord says "the past few minutes" (unspecified). */
  enforcedNonceMs: 5 * 60_000,
  embedsPerMessage: 10,
  embedTitleChars: 256,
  embedDescriptionChars: 4096,
  /** All titles, descriptions, field names/values, footers and author names of a message together. */
  embedTotalChars: 6000,
  actionRowsPerMessage: 5,
  buttonsPerActionRow: 5,
  customIdChars: 100,
  buttonLabelChars: 80,
  /** With IS_COMPONENTS_V2 (1 << 15): every component, nested ones included. */
  componentsV2PerMessage: 40,
  /** All Text Displays together; "subject to change", and not yet in the reference pages of Discord's documentation. */
  componentsV2TextChars: 4000,
  threadNameChars: 100,
  /** A modal (interaction callback type 9): its title, its 1–5 top-level components, a text input's label, placeholder and lengths. */
  modalTitleChars: 45,
  modalComponents: 5,
  textInputLabelChars: 45,
  textInputPlaceholderChars: 100,
  textInputValueChars: 4000,
  reactionsPerMessage: 20,
  /** The initial interaction response must arrive within 3 s of the interaction, else 10062. */
  interactionAckMs: 3_000,
  /** The interaction token (follow-ups, @original edits) then lives 15 min, else 50027. */
  interactionTokenMs: 15 * 60_000,
} as const;

/** Message flags the fake reads or sets. */
export const FLAG = {
  suppressEmbeds: 1 << 2,
  hasThread: 1 << 5,
  ephemeral: 1 << 6,
  loading: 1 << 7,
  suppressNotifications: 1 << 12,
  componentsV2: 1 << 15,
} as const;

/** The message fields a bot sends (create, edit, interaction response, follow-up). */
export interface MessageBody {
  content?: string | null;
  embeds?: unknown[] | null;
  components?: unknown[] | null;
  flags?: number;
  tts?: boolean;
  nonce?: string | number;
  /** With a nonce: a second message with the same nonce, by the same author, within a few minutes returns the first. */
  enforce_nonce?: boolean;
  allowed_mentions?: AllowedMentions;
  message_reference?: { message_id?: string; channel_id?: string; fail_if_not_exists?: boolean };
  sticker_ids?: string[];
  poll?: unknown;
  attachments?: unknown[];
}

interface ComponentLike {
  type?: number;
  custom_id?: string;
  label?: string;
  style?: number;
  url?: string;
  content?: string;
  components?: ComponentLike[];
  accessory?: ComponentLike;
}

/** What Discord refuses in a message body, with its error codes. */
export function validateMessageBody(body: MessageBody, context: { creating: boolean; hasFiles: boolean }): void {
  const content = body.content ?? '';
  const embeds = body.embeds ?? [];
  const components = (body.components ?? []) as ComponentLike[];
  const v2 = ((body.flags ?? 0) & FLAG.componentsV2) !== 0;
  if (typeof body.nonce === 'string' && body.nonce.length > DISCORD_LIMITS.nonceChars) {
    throw invalidFormBody('nonce', 'BASE_TYPE_MAX_LENGTH', `Must be ${DISCORD_LIMITS.nonceChars} or fewer in length.`);
  }
  if (content.length > DISCORD_LIMITS.contentChars) {
    throw invalidFormBody(
      'content',
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${DISCORD_LIMITS.contentChars} or fewer in length.`,
    );
  }
  if (
    context.creating &&
    !content &&
    embeds.length === 0 &&
    components.length === 0 &&
    !context.hasFiles &&
    !body.sticker_ids?.length &&
    !body.poll
  ) {
    throw new DiscordApiError(400, 50006, 'Cannot send an empty message');
  }
  const allowed = body.allowed_mentions;
  if (allowed?.parse?.includes('users') && allowed.users?.length) {
    throw invalidFormBody(
      'allowed_mentions',
      'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
      'parse:["users"] and users: [ids] are mutually exclusive.',
    );
  }
  if (allowed?.parse?.includes('roles') && allowed.roles?.length) {
    throw invalidFormBody(
      'allowed_mentions',
      'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
      'parse:["roles"] and roles: [ids] are mutually exclusive.',
    );
  }
  validateEmbeds(embeds);
  if (v2) validateComponentsV2(body, components);
  else validateClassicComponents(components);
}

function validateEmbeds(embeds: unknown[]): void {
  if (embeds.length > DISCORD_LIMITS.embedsPerMessage)
    throw invalidFormBody(
      'embeds',
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${DISCORD_LIMITS.embedsPerMessage} or fewer in length.`,
    );
  let total = 0;
  for (const [index, raw] of embeds.entries()) {
    const embed = raw as {
      title?: string;
      description?: string;
      fields?: { name?: string; value?: string }[];
      footer?: { text?: string };
      author?: { name?: string };
    };
    if ((embed.title ?? '').length > DISCORD_LIMITS.embedTitleChars)
      throw invalidFormBody(
        `embeds.${index}.title`,
        'BASE_TYPE_MAX_LENGTH',
        `Must be ${DISCORD_LIMITS.embedTitleChars} or fewer in length.`,
      );
    if ((embed.description ?? '').length > DISCORD_LIMITS.embedDescriptionChars) {
      throw invalidFormBody(
        `embeds.${index}.description`,
        'BASE_TYPE_MAX_LENGTH',
        `Must be ${DISCORD_LIMITS.embedDescriptionChars} or fewer in length.`,
      );
    }
    total +=
      (embed.title ?? '').length +
      (embed.description ?? '').length +
      (embed.footer?.text ?? '').length +
      (embed.author?.name ?? '').length;
    for (const field of embed.fields ?? []) total += (field.name ?? '').length + (field.value ?? '').length;
  }
  if (total > DISCORD_LIMITS.embedTotalChars)
    throw invalidFormBody('embeds', 'MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000');
}

function validateClassicComponents(rows: ComponentLike[]): void {
  if (rows.length > DISCORD_LIMITS.actionRowsPerMessage)
    throw invalidFormBody(
      'components',
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${DISCORD_LIMITS.actionRowsPerMessage} or fewer in length.`,
    );
  const seen = new Set<string>();
  for (const [rowIndex, row] of rows.entries()) {
    if (row.type !== 1)
      throw invalidFormBody(
        `components.${rowIndex}`,
        'UNION_TYPE_CHOICES',
        'Value of field "type" must be one of (1,). Set IS_COMPONENTS_V2 to use other top-level components.',
      );
    const children = row.components ?? [];
    if (children.length > DISCORD_LIMITS.buttonsPerActionRow) {
      throw invalidFormBody(
        `components.${rowIndex}.components`,
        'BASE_TYPE_MAX_LENGTH',
        `Must be ${DISCORD_LIMITS.buttonsPerActionRow} or fewer in length.`,
      );
    }
    for (const [index, child] of children.entries())
      validateInteractive(child, `components.${rowIndex}.components.${index}`, seen);
  }
}

function validateInteractive(component: ComponentLike, path: string, seen: Set<string>): void {
  if (component.type === 2 && component.style !== 5 && component.style !== 6) {
    const id = component.custom_id ?? '';
    if (id.length < 1 || id.length > DISCORD_LIMITS.customIdChars)
      throw invalidFormBody(
        `${path}.custom_id`,
        'BASE_TYPE_BAD_LENGTH',
        `Must be between 1 and ${DISCORD_LIMITS.customIdChars} in length.`,
      );
    if (seen.has(id))
      throw invalidFormBody(
        `${path}.custom_id`,
        'COMPONENT_CUSTOM_ID_DUPLICATED',
        'Component custom id cannot be duplicated',
      );
    seen.add(id);
  }
  if (component.type === 2 && (component.label ?? '').length > DISCORD_LIMITS.buttonLabelChars) {
    throw invalidFormBody(
      `${path}.label`,
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${DISCORD_LIMITS.buttonLabelChars} or fewer in length.`,
    );
  }
}

function validateComponentsV2(body: MessageBody, components: ComponentLike[]): void {
  if (body.content)
    throw invalidFormBody(
      'content',
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
      "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
    );
  if (body.embeds?.length)
    throw invalidFormBody(
      'embeds',
      'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
      "The 'embeds' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
    );
  let count = 0;
  let text = 0;
  const seen = new Set<string>();
  const walk = (list: ComponentLike[], path: string): void => {
    for (const [index, component] of list.entries()) {
      count += 1;
      if (component.type === 10) text += (component.content ?? '').length;
      validateInteractive(component, `${path}.${index}`, seen);
      if (component.components) walk(component.components, `${path}.${index}.components`);
      if (component.accessory) walk([component.accessory], `${path}.${index}.accessory`);
    }
  };
  walk(components, 'components');
  if (count > DISCORD_LIMITS.componentsV2PerMessage)
    throw invalidFormBody(
      'components',
      'MAX_COMPONENTS',
      `Must be ${DISCORD_LIMITS.componentsV2PerMessage} or fewer components in total.`,
    );
  if (text > DISCORD_LIMITS.componentsV2TextChars)
    throw invalidFormBody(
      'components',
      'MAX_TEXT_DISPLAY_LENGTH',
      `Text displays must be ${DISCORD_LIMITS.componentsV2TextChars} or fewer characters in total.`,
    );
}

interface TextInputLike {
  type?: number;
  custom_id?: string;
  style?: number;
  label?: string;
  placeholder?: string;
  min_length?: number;
  max_length?: number;
  value?: string;
  required?: boolean;
}

/**
 * What Discord refuses in a modal (callback type 9's data): a custom id and a title, and 1–5
 * rows, each an action row holding exactly one text input (which then needs a label), or a
 * label component (type 18) around one. A modal has no content, embeds or buttons.
 */
export function validateModal(data: unknown): void {
  const modal = (data ?? {}) as {
    custom_id?: string;
    title?: string;
    components?: { type?: number; label?: string; component?: TextInputLike; components?: TextInputLike[] }[];
  };
  const id = modal.custom_id ?? '';
  if (id.length < 1 || id.length > DISCORD_LIMITS.customIdChars)
    throw invalidFormBody(
      'data.custom_id',
      'BASE_TYPE_BAD_LENGTH',
      `Must be between 1 and ${DISCORD_LIMITS.customIdChars} in length.`,
    );
  const title = Array.from(modal.title ?? '');
  if (title.length < 1 || title.length > DISCORD_LIMITS.modalTitleChars)
    throw invalidFormBody(
      'data.title',
      'BASE_TYPE_BAD_LENGTH',
      `Must be between 1 and ${DISCORD_LIMITS.modalTitleChars} in length.`,
    );
  const rows = modal.components ?? [];
  if (rows.length < 1 || rows.length > DISCORD_LIMITS.modalComponents)
    throw invalidFormBody(
      'data.components',
      'BASE_TYPE_BAD_LENGTH',
      `Must be between 1 and ${DISCORD_LIMITS.modalComponents} in length.`,
    );
  const seen = new Set<string>();
  for (const [index, row] of rows.entries()) {
    const path = `data.components.${index}`;
    if (row.type === 1) {
      if (row.components?.length !== 1 || row.components[0]!.type !== 4)
        throw invalidFormBody(
          `${path}.components`,
          'BASE_TYPE_BAD_LENGTH',
          'An action row in a modal holds exactly one text input.',
        );
      const input = row.components[0]!;
      if (!input.label)
        throw invalidFormBody(`${path}.components.0.label`, 'BASE_TYPE_REQUIRED', 'This field is required');
      validateTextInput(input, `${path}.components.0`, seen);
    } else if (row.type === 18) {
      if (!row.label || Array.from(row.label).length > DISCORD_LIMITS.textInputLabelChars)
        throw invalidFormBody(
          `${path}.label`,
          'BASE_TYPE_BAD_LENGTH',
          `Must be between 1 and ${DISCORD_LIMITS.textInputLabelChars} in length.`,
        );
      if (row.component?.type !== 4)
        throw invalidFormBody(`${path}.component`, 'UNION_TYPE_CHOICES', 'The fake takes text inputs only in a label.');
      if (row.component.label !== undefined)
        throw invalidFormBody(
          `${path}.component.label`,
          'TEXT_INPUT_LABEL_DEPRECATED',
          'A text input in a label has no label of its own.',
        );
      validateTextInput(row.component, `${path}.component`, seen);
    } else {
      throw invalidFormBody(`${path}.type`, 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (1, 18).');
    }
  }
}

function validateTextInput(input: TextInputLike, path: string, seen: Set<string>): void {
  const id = input.custom_id ?? '';
  if (id.length < 1 || id.length > DISCORD_LIMITS.customIdChars)
    throw invalidFormBody(
      `${path}.custom_id`,
      'BASE_TYPE_BAD_LENGTH',
      `Must be between 1 and ${DISCORD_LIMITS.customIdChars} in length.`,
    );
  if (seen.has(id))
    throw invalidFormBody(
      `${path}.custom_id`,
      'COMPONENT_CUSTOM_ID_DUPLICATED',
      'Component custom id cannot be duplicated',
    );
  seen.add(id);
  if (input.style !== 1 && input.style !== 2)
    throw invalidFormBody(`${path}.style`, 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2}.');
  if (input.label !== undefined && Array.from(input.label).length > DISCORD_LIMITS.textInputLabelChars)
    throw invalidFormBody(
      `${path}.label`,
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${DISCORD_LIMITS.textInputLabelChars} or fewer in length.`,
    );
  if ((input.placeholder ?? '').length > DISCORD_LIMITS.textInputPlaceholderChars)
    throw invalidFormBody(
      `${path}.placeholder`,
      'BASE_TYPE_MAX_LENGTH',
      `Must be ${DISCORD_LIMITS.textInputPlaceholderChars} or fewer in length.`,
    );
  const max = DISCORD_LIMITS.textInputValueChars;
  if (input.min_length !== undefined && (input.min_length < 0 || input.min_length > max))
    throw invalidFormBody(`${path}.min_length`, 'NUMBER_TYPE_MAX', `int value should be between 0 and ${max}.`);
  if (input.max_length !== undefined && (input.max_length < 1 || input.max_length > max))
    throw invalidFormBody(`${path}.max_length`, 'NUMBER_TYPE_MAX', `int value should be between 1 and ${max}.`);
  if ((input.value ?? '').length > (input.max_length ?? max))
    throw invalidFormBody(`${path}.value`, 'BASE_TYPE_MAX_LENGTH', 'The value is longer than the input allows.');
}

export function threadOptions(body: unknown): { name: string; autoArchiveDuration?: 60 | 1440 | 4320 | 10080 } {
  const { name, auto_archive_duration } = (body ?? {}) as { name?: string; auto_archive_duration?: number };
  if (!name || name.length > DISCORD_LIMITS.threadNameChars)
    throw invalidFormBody(
      'name',
      'BASE_TYPE_BAD_LENGTH',
      `Must be between 1 and ${DISCORD_LIMITS.threadNameChars} in length.`,
    );
  if (auto_archive_duration !== undefined && ![60, 1440, 4320, 10080].includes(auto_archive_duration)) {
    throw invalidFormBody(
      'auto_archive_duration',
      'BASE_TYPE_CHOICES',
      'Value must be one of {60, 1440, 4320, 10080}.',
    );
  }
  return {
    name,
    ...(auto_archive_duration !== undefined
      ? { autoArchiveDuration: auto_archive_duration as 60 | 1440 | 4320 | 10080 }
      : {}),
  };
}

/** A server's upload limit by boost tier: 10 MiB up to tier 1, 50 MiB at tier 2, 100 MiB at tier 3. */
export function uploadLimitForTier(tier: number): number {
  if (tier >= 3) return 100 * 1024 * 1024;
  if (tier === 2) return 50 * 1024 * 1024;
  return DISCORD_LIMITS.uploadBytes;
}

/** Discord's answer to an upload over the limit: 413 with code 40005. */
export const requestEntityTooLarge = (): DiscordApiError => new DiscordApiError(413, 40005, 'Request entity too large');

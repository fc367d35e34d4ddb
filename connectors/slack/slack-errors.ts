// Slack's Web API answers a refused call with an error whose `data.error` names the reason
// (`channel_not_found`, `already_reacted`, …): the code the connector decides on.

/** The `error` code of a Slack platform error (`channel_not_found`, …), if it is one. */
export function slackError(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  return typeof data?.error === 'string' ? data.error : undefined;
}

/**
 * What every extraction prompt is made of: chat messages, the markers around the document, and one
 * factory for the usual shape (a system prompt, the document, and a bounded repair request).
 */

/** One chat message of a prompt. */
interface PromptMessage {
  role: 'system' | 'user';
  content: string;
}

/** A versioned prompt: how to ask for an extraction, and how to ask once more after a bad answer. */
export interface ExtractionPrompt {
  promptVersion: string;
  /** Messages for the first call. The user message holds the text between `<document>\n` and `\n</document>`. */
  buildMessages(documentText: string): PromptMessage[];
  /** Messages for one bounded repair call: the document, the previous output and what was wrong with it. */
  buildRepairMessages(documentText: string, previousOutput: string, problems: string[]): PromptMessage[];
}

/** Opening marker of the document inside the user message; the fake provider looks for it. */
export const DOCUMENT_OPEN = '<document>\n';
/** Closing marker of the document inside the user message. */
export const DOCUMENT_CLOSE = '\n</document>';

/** Wraps document text in the markers the fake provider (and a reader of the prompt) relies on. */
function wrapDocument(documentText: string): string {
  return `${DOCUMENT_OPEN}${documentText}${DOCUMENT_CLOSE}`;
}

/**
 * A prompt of the usual shape: `systemPrompt` as the system message, `instruction` and the wrapped
 * document as the user message; the repair call adds the previous output and its problems.
 */
export function chatPrompt(promptVersion: string, systemPrompt: string, instruction: string): ExtractionPrompt {
  return {
    promptVersion,
    buildMessages(documentText) {
      return [
        { role: 'system', content: systemPrompt },
        { role: 'user', content: `${instruction}\n\n${wrapDocument(documentText)}` },
      ];
    },
    buildRepairMessages(documentText, previousOutput, problems) {
      return [
        { role: 'system', content: systemPrompt },
        {
          role: 'user',
          content: [
            instruction,
            '',
            wrapDocument(documentText),
            '',
            'Your previous answer was:',
            '<previous_output>',
            previousOutput,
            '</previous_output>',
            '',
            'It has these problems:',
            ...problems.map((problem) => `- ${problem}`),
            '',
            'Read the document again and answer with the corrected, complete JSON object.',
          ].join('\n'),
        },
      ];
    },
  };
}

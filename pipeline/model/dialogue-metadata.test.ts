/**
 * The metadata's utterance texts are named after the stage that made them (`text.spoken` is the
 * spoken-style rewrite, not what is heard; `text.transcript` is what the audio says): the README's
 * "Output" section says what each field of the schema holds, so a reader does not take one for the other.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { metadataUtteranceSchema, taskDialogueMetadataSchema } from './dialogue-metadata.ts';

const README = new URL('../../README.md', import.meta.url);

describe("the README on an utterance's texts", () => {
  it('names every text field of the metadata schema, says transcript is what the audio says and spoken is not', async () => {
    const readme = await readFile(README, 'utf8');
    const paragraph = /^- \*\*An utterance's texts\*\*[\s\S]*?(?=\n- |\n\n)/m.exec(readme)?.[0];
    expect(paragraph, 'README: the paragraph "- **An utterance\'s texts**" under Output').toBeDefined();
    const text = paragraph!.replace(/\s+/g, ' ');
    const fields = Object.keys(metadataUtteranceSchema.shape.text.shape);
    // what every dataset's metadata may have and what an MT-QA build writes: the same fields
    expect(Object.keys(taskDialogueMetadataSchema.shape.utterances.element.shape.text.shape).sort()).toEqual(
      [...fields].sort(),
    );
    expect(fields.length).toBeGreaterThanOrEqual(5);
    for (const field of fields) expect(text, `text.${field}`).toContain(`\`text.${field}\``);
    expect(text).toMatch(/`text\.transcript` \*\*what the audio says\*\*/);
    expect(text).toMatch(/`spoken` is not it/);
  });
});

/**
 * A test double for {@link LanguageModel}: records every request in `calls` and answers with canned
 * results (a fixed list, consumed in order) or with a function of the request.
 */
import type { GenerationRequest, GenerationResult, LanguageModel } from './language-model.ts';

/** Produces the result for one call; may throw to simulate a failure. */
export type FakeResponder = (
  request: GenerationRequest,
  callIndex: number,
) => GenerationResult | string | Promise<GenerationResult | string>;

/** How a {@link FakeLanguageModel} answers. */
export interface FakeLanguageModelOptions {
  id?: string;
  /** Results returned in call order; a string is `{text, finishReason: 'stop'}`. */
  results?: ReadonlyArray<GenerationResult | string>;
  /** Used when `results` is absent or used up. */
  respond?: FakeResponder;
}

/** A {@link LanguageModel} for tests that records its calls. */
export class FakeLanguageModel implements LanguageModel {
  readonly id: string;
  /** Every request received, in order. */
  readonly calls: GenerationRequest[] = [];
  private readonly results: ReadonlyArray<GenerationResult | string>;
  private readonly respond: FakeResponder | undefined;

  /** @param options canned results and/or a responder function. */
  constructor(options: FakeLanguageModelOptions = {}) {
    this.id = options.id ?? 'fake';
    this.results = options.results ?? [];
    this.respond = options.respond;
  }

  /**
   * Records the request and returns the next canned result or the responder's.
   *
   * @throws Error when no canned result is left and no responder is set; whatever the responder throws.
   */
  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const callIndex = this.calls.length;
    this.calls.push(request);
    const canned = this.results[callIndex];
    const answer =
      canned !== undefined ? canned : this.respond !== undefined ? await this.respond(request, callIndex) : undefined;
    if (answer === undefined) {
      throw new Error(
        `FakeLanguageModel: no result for call ${callIndex + 1} (${this.results.length} canned, no responder)`,
      );
    }
    return typeof answer === 'string' ? { text: answer, finishReason: 'stop' } : answer;
  }
}

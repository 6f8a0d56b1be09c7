// The request flags `invoke` and `local invoke` share: both send the body lib/kserve/invoke-request.ts builds.

import type { Command } from 'commander';
import { described } from './help-style';

export interface InvokeInputOptions {
  readonly input?: string[];
  readonly text?: string[];
  readonly body?: string;
  readonly binary?: boolean;
  readonly shape?: string;
  readonly datatype?: string;
  readonly output?: string[];
  readonly top?: string;
}

export function addInvokeInputOptions(command: Command): Command {
  return command
    .option(
      '--input <NAME=@file>',
      'an input: @file.json (array), @image.jpg (raw bytes, UINT8 [1,n]) or inline JSON (repeatable)',
      repeatable,
    )
    .option('--text <NAME=sentence>', 'a BYTES input element; repeat a NAME for a batch (repeatable)', repeatable)
    .option('--body <request.json>', 'send this KServe v2 request as-is')
    .option('--binary', 'send inputs as binary tensors too (application/vnd.sagemaker-triton.binary+json, much smaller than JSON)')
    .option('--no-binary', described('plain JSON both ways', {
      default: 'JSON inputs, binary+json when one is FP16 or BF16; outputs always binary',
    }))
    .option('--shape <dims>', 'input shape(s) when the config is not known: 1,3,224,224 or NAME=1,3;NAME2=1,8')
    .option('--datatype <type>', 'input datatype(s) when the config is not known: FP32 or NAME=FP32;NAME2=INT64')
    .option('--output <NAME>', described('an output to return (repeatable)', { default: 'all' }), repeatable)
    .option('--top <k>', 'show the k largest values of each output row (classifier scores)');
}

/** Commander accumulator for options that may be given several times (`--input`, `--text`, `--memory`, ...). */
export function repeatable(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

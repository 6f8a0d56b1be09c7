import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeSchema } from '../../lib/config/descriptor';
import { MODEL_CONFIG_DESCRIPTOR } from '../../lib/config/model-config.descriptor';
import { ModelConfigSchema } from '../../lib/config/model-config-schema';
import { renderDescriptorModule } from '../../scripts/generate-config-descriptor';

describe('ModelConfig descriptor', () => {
  it('is what the zod schemas describe now (run `npm run generate` after changing them)', () => {
    expect(MODEL_CONFIG_DESCRIPTOR).toEqual(describeSchema(ModelConfigSchema));
    const committed = readFileSync(join(__dirname, '../../lib/config/model-config.descriptor.ts'), 'utf8');
    expect(committed).toBe(renderDescriptorModule());
  });

  it('covers every message and field of model_config.proto (the reference lists 46 messages)', () => {
    const fields = MODEL_CONFIG_DESCRIPTOR.messages.ModelConfig!.fields;
    expect(Object.keys(fields)).toHaveLength(25);
    expect(Object.keys(MODEL_CONFIG_DESCRIPTOR.messages)).toHaveLength(46);
    expect(fields.parameters).toEqual({ kind: 'map', key: 'string', value: { kind: 'message', message: 'ModelParameter' } });
    expect(MODEL_CONFIG_DESCRIPTOR.messages.ModelDynamicBatching!.fields.priority_queue_policy).toMatchObject({
      kind: 'map',
      key: 'uint64',
    });
    expect(fields.ensemble_scheduling).toMatchObject({ oneof: 'scheduling_choice' });
    expect(MODEL_CONFIG_DESCRIPTOR.enums.DataType).toHaveLength(15);
  });
});

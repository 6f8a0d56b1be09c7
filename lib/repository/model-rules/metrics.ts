// §14 model_metrics: each metric control names a customizable family and gives histogram buckets.

import type { LoadedModel } from '../model';
import type { Reporter } from './reporter';

/** The metric families Triton core lets a model_metrics metric_control customize. */
const CUSTOMIZABLE_FAMILIES = new Set([
  'nv_inference_request_duration',
  'nv_inference_queue_duration',
  'nv_inference_compute_input_duration',
  'nv_inference_compute_infer_duration',
  'nv_inference_compute_output_duration',
  'nv_model_load_duration',
  'nv_inference_first_response_histogram_ms',
]);

export function checkMetrics(model: LoadedModel, r: Reporter) {
  const of = `(model '${model.name}')`;
  for (const control of model.config.model_metrics?.metric_control ?? []) {
    const family = control.metric_identifier?.family;
    if (!control.metric_identifier) {
      r.error('metric-identifier-missing', control, undefined, `metric control must specify 'metric_identifier' ${of}.`);
    } else if (!family) {
      r.error('metric-family-missing', control, 'metric_identifier', `metric identifier must specify non-empty 'family' ${of}.`);
    } else if (!CUSTOMIZABLE_FAMILIES.has(family)) {
      const message = `Metric family '${family}' in 'metric_identifier' is not a customizable metric in Triton core.`;
      r.warning('metric-family-not-customizable', control.metric_identifier, 'family', message);
    }
    if (!control.histogram_options) {
      r.error('metric-histogram-missing', control, undefined, `metric control must specify 'histogram_options' ${of}.`);
    } else if ((control.histogram_options.buckets ?? []).length === 0) {
      r.error('metric-buckets-missing', control, 'histogram_options', `histogram options must specify non-empty 'buckets' ${of}.`);
    }
  }
}

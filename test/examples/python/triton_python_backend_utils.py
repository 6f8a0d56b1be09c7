"""Test double of Triton's triton_python_backend_utils: the part of its API the examples' model.py files use,
with the same names and behaviour for CPU tensors, so those files run unchanged outside Triton."""

import numpy as np

_NUMPY_TYPES = {
    "TYPE_BOOL": np.bool_,
    "TYPE_UINT8": np.uint8,
    "TYPE_UINT16": np.uint16,
    "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64,
    "TYPE_INT8": np.int8,
    "TYPE_INT16": np.int16,
    "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64,
    "TYPE_FP16": np.float16,
    "TYPE_FP32": np.float32,
    "TYPE_FP64": np.float64,
    "TYPE_STRING": np.object_,
}


class TritonModelException(Exception):
    pass


class TritonError:
    def __init__(self, message):
        self._message = message

    def message(self):
        return self._message


class Tensor:
    def __init__(self, name, array):
        if not isinstance(array, np.ndarray):
            raise TritonModelException(f"Tensor '{name}' must be built from a numpy array, got {type(array).__name__}")
        self._name = name
        self._array = array

    def name(self):
        return self._name

    def as_numpy(self):
        return self._array

    def is_cpu(self):
        return True


class InferenceRequest:
    def __init__(self, inputs):
        self._inputs = inputs

    def inputs(self):
        return list(self._inputs)


class InferenceResponse:
    def __init__(self, output_tensors=None, error=None):
        self._outputs = list(output_tensors or [])
        self._error = error

    def output_tensors(self):
        return self._outputs

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error


def get_input_tensor_by_name(request, name):
    for tensor in request.inputs():
        if tensor.name() == name:
            return tensor
    return None


def _config_entry(entries, name):
    for entry in entries:
        if entry["name"] == name:
            return entry
    return {}


def get_input_config_by_name(model_config, name):
    return _config_entry(model_config.get("input", []), name)


def get_output_config_by_name(model_config, name):
    return _config_entry(model_config.get("output", []), name)


def triton_string_to_numpy(triton_type):
    return _NUMPY_TYPES.get(triton_type)

#!/usr/bin/env python3
"""Serializes the DALI preprocessing pipeline of the `dali` model to dali/1/model.dali: encoded image bytes ->
GPU decode -> 299x299 resize -> ImageNet mean/std normalisation, HWC float32 (what inception_graphdef expects).

Needs NVIDIA DALI (pip package nvidia-dali-cuda120, of the version the serving Triton image's DALI backend ships);
generate_models.sh runs it in a GPU container as the seed does.
"""

import argparse
from pathlib import Path

import nvidia.dali as dali
import nvidia.dali.types as types

SIZE = 299  # Inception v3's input height and width; dims [299, 299, 3] of DALI_OUTPUT_0 in dali/config.pbtxt


# Triton's DALI backend replaces batch_size with the config's max_batch_size at load time; the values here only
# have to build a valid pipeline.
@dali.pipeline_def(batch_size=3, num_threads=1, device_id=0)
def inception_preprocessing():
    images = dali.fn.external_source(device="cpu", name="DALI_INPUT_0")  # the config's input name
    images = dali.fn.decoders.image(images, device="mixed", output_type=types.RGB)
    images = dali.fn.resize(images, resize_x=SIZE, resize_y=SIZE)
    return dali.fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="HWC",
        crop=(SIZE, SIZE),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parent / "dali" / "1" / "model.dali"
    parser.add_argument("--out", type=Path, default=default, help=f"default: {default}")
    out = parser.parse_args().out
    out.parent.mkdir(parents=True, exist_ok=True)
    inception_preprocessing().serialize(filename=str(out))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

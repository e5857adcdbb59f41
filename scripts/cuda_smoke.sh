#!/usr/bin/env bash
# The project's CUDA paths on a GPU machine, each checked against torch, in under ten minutes (issue 42, item 9).
# Run it first in any session lent a GPU (the `device` tool), from the repository root:
#
#     bash scripts/cuda_smoke.sh [OUT_DIR]
#
# It needs a Python with a CUDA build of torch and this project's dependencies: $PYTHON, else .venv/bin/python
# (`make setup`), else python3. The zoo's CNN (resnet18) and transformer (nn_transformer) are exported on the spot
# (tests/zoo/), then: `run --device cuda` on both, `numerics --candidate cuda` on both, a CUDA AOTInductor package
# built by `run --device cuda --aoti` and compared by `numerics --candidate PACKAGE.pt2`, and that package's profile
# (`run PACKAGE.pt2 --node-times`, torch.profiler's trace) holding CUDA kernels. What each step checks, and against
# what, is in scripts/cuda_smoke.py. Exit 0: every step passed; 1: a step failed (named); 2: no usable CUDA device.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-}
if [ -z "$PY" ]; then
    if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
OUT=${1:-$(mktemp -d -t pt2v-cuda-smoke-XXXXXX)}
mkdir -p "$OUT"
echo "cuda_smoke: $PY, files in $OUT"
export PT2V_WORKER_PYTHON="$PY"  # the worker runs the same torch
exec timeout 600 "$PY" scripts/cuda_smoke.py "$OUT"

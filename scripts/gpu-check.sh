#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, cupy, PyTorch, pytest and hypothesis (no install step: it runs
# the repo as it is): the engine's cuda tests on the real cupy, then bench/cuda.py against
# PyTorch CUDA. Outputs go to $OUT (or /tmp/gpu-check). CI has no GPU: there the same tests run on
# tests/engine/fake_cupy.py. (test_opinfo_samples.py, which has no cuda test, needs expecttest.)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
nvidia-smi -L
python3 -c 'import cupy, numpy, torch; print("cupy", cupy.__version__, "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())'
export PYTHONUNBUFFERED=1 WIREGRAD_FAKE_CUPY=0
timeout "${TEST_SECONDS:-300}" python3 -m pytest -p no:cacheprovider -o addopts= -q -rfEs \
    -n "${WORKERS:-4}" tests/engine -k cuda --ignore tests/engine/test_opinfo_samples.py 2>&1 | tee "$out/cuda-tests.txt" | tail -60
timeout "${BENCH_SECONDS:-180}" python3 bench/cuda.py 2>&1 | tee "$out/bench-cuda.txt"

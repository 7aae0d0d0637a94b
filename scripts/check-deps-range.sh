#!/usr/bin/env bash
# The embedded backend at both ends of the transformers range that pyproject.toml's `local`
# extra declares: for the floor (the `>=` version, pinned) and for the newest release pip
# resolves inside the range, a throwaway venv gets torch (CPU build, pinned first), then
# uab-cli[local,test] (editable, this working tree), then runs tests/backends/test_local.py on
# the real SmolLM2 GGUF. Fails when either end fails or skips a test.
#
#   scripts/check-deps-range.sh            both ends
#   scripts/check-deps-range.sh 5.10.0     one more version in between (any number of them)
#
# Variables: PYTHON (makes the venvs; default python3), TORCH_VERSION (default: the Makefile's),
# TORCH_INDEX (as in the Makefile: where torch comes from), UAB_CACHE_DIR (the uab cache holding
# the GGUF from `make model` and its conversion; default ~/.cache/uab), KEEP=1 (keep the venvs).
set -euo pipefail
for arg in "$@"; do  # before any venv is built: `--help` or a typo used to run both ends first (minutes)
  case $arg in
    -h | --help)
      echo "usage: $0 [TRANSFORMERS_VERSION ...]"
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
      exit 0 ;;
    [0-9]*) ;;
    *) echo "check-deps-range: $arg: a transformers version expected (e.g. 5.10.0); --help for usage" >&2
       exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
TORCH_VERSION=${TORCH_VERSION:-$(sed -n 's/^TORCH_VERSION := *//p' Makefile)}
TORCH_INDEX=${TORCH_INDEX:-}
export UAB_CACHE_DIR=${UAB_CACHE_DIR:-$HOME/.cache/uab}
export HF_HUB_OFFLINE=1 PIP_DISABLE_PIP_VERSION_CHECK=1

spec=$(sed -n 's/^local = .*"\(transformers[^"]*\)".*/\1/p' pyproject.toml)
floor=$(sed -n 's/.*>=\([0-9][0-9.]*\).*/\1/p' <<<"$spec")
if [[ -z $spec || -z $floor ]]; then
  echo "check-deps-range: no 'transformers>=...' in pyproject.toml's local extra" >&2
  exit 2
fi
gguf="$UAB_CACHE_DIR/gguf/SmolLM2-135M-Instruct.Q4_1.gguf"
if [[ ! -f $gguf ]]; then
  echo "check-deps-range: $gguf is missing: run 'make model' (with this UAB_CACHE_DIR)" >&2
  exit 2
fi
latest=$("$PYTHON" -m pip index versions transformers 2>/dev/null | sed -n 's/^transformers (\(.*\))$/\1/p' || true)
echo "==> declared: $spec; newest release pip sees: ${latest:-unknown}; torch $TORCH_VERSION"

work=$(mktemp -d "${TMPDIR:-/tmp}/uab-deps-range.XXXXXX")
[[ ${KEEP:-} == 1 ]] || trap 'rm -rf "$work"' EXIT
summary=()
status=0

check() {  # check NAME REQUIREMENT: one venv, one test run
  local name=$1 requirement=$2 venv="$work/$1" start=$SECONDS
  echo "==> [$name] $requirement in $venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "torch==$TORCH_VERSION" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"}
  "$venv/bin/python" -m pip install --quiet -e '.[local,test]' "$requirement"
  local version
  version=$("$venv/bin/python" -c 'import transformers; print(transformers.__version__)')
  local log="$work/$name.log" result
  if "$venv/bin/python" -m pytest tests/backends/test_local.py -q -rs -p no:cacheprovider 2>&1 | tee "$log"; then
    if grep -q 'skipped' "$log"; then
      result="FAILED (tests skipped)"
      status=1
    else
      result=$(tail -n 1 "$log" | sed 's/=//g; s/^ *//; s/ *$//')
    fi
  else
    result="FAILED: $(tail -n 1 "$log" | sed 's/=//g; s/^ *//; s/ *$//')"
    status=1
  fi
  summary+=("$name: transformers $version, torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)'): $result (venv and tests $((SECONDS - start)) s)")
}

check floor "transformers==$floor"
check newest "$spec"
for extra in "$@"; do
  check "v$extra" "transformers==$extra"
done

echo "==> summary ($spec)"
printf '  %s\n' "${summary[@]}"
newest=$(sed -n 's/^newest: transformers \([^,]*\),.*/\1/p' <<<"${summary[1]}")
if [[ -n $latest && $newest != "$latest" ]]; then
  echo "  note: the newest release, transformers $latest, is outside the declared range (newest inside: $newest)"
fi
exit $status

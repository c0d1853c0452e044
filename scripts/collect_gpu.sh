#!/usr/bin/env bash
# DARTS ground truth on one GPU for a fixed number of seconds, into separate files under OUT; bring them back and
# append them with 'nas-envs merge OUT/*.jsonl'. Small networks are bound by kernel launches, so several one-thread
# worker processes share the GPU (an H200 with 16 cores: about 36 s per training, 16 at a time).
#   OUT/darts-noise.jsonl  noise-subset architectures from index NOISE_FROM (3 seeds each): the subset that judges
#                          the surrogates, and the scarcest kind of record.
#   OUT/darts-train.jsonl  training architectures from index TRAIN_FROM (a quarter of the workers).
#   OUT/darts-paramfree.jsonl  parameter-free-heavy training architectures from index PARAMFREE_FROM: the poor
#                          region, which must stay >= 5 % of the trainings (a quarter of the workers).
# The defaults lie far above what the CPU collectors reach, so the two never train the same job. The check that
# GPU and CPU trainings measure the same thing (assets/data/README.md, "GPU trainings") was made with
#   nas-envs collect darts --subset noise --n 12 --device cuda --out checks/darts-fmnist14-c8l8-e4-v1-gpu-check.jsonl
# Usage: [WORKERS=16 DEVICE=cuda NOISE_FROM=100 TRAIN_FROM=4000 PARAMFREE_FROM=1000] scripts/collect_gpu.sh OUT SECONDS
set -uo pipefail
out=${1:?output folder}
seconds=${2:?seconds to run}
workers=${WORKERS:-16}
device=${DEVICE:-cuda}
noise_from=${NOISE_FROM:-100}
train_from=${TRAIN_FROM:-4000}
paramfree_from=${PARAMFREE_FROM:-1000}
quarter=$((workers / 4))
deadline=$((SECONDS + seconds))
mkdir -p "$out"
# Every collection stops at the deadline (a stopped collector loses only the trainings in flight).
collect() {
  local left=$((deadline - SECONDS))
  if ((left > 0)); then timeout "$left" python3 -m nas_envs.cli collect darts --device "$device" "$@"; fi
}
python3 -m nas_envs.cli collect darts --protocol darts-smoke --n 1 --device "$device" --out "$out/smoke.jsonl" || exit 1
rm -f "$out/smoke.jsonl"
collect --subset noise --start "$noise_from" --n $((noise_from + 1000)) --workers $((workers / 2)) \
  --out "$out/darts-noise.jsonl" &
collect --start "$train_from" --n $((train_from + 10000)) --workers "$quarter" --out "$out/darts-train.jsonl" &
collect --source param-free --start "$paramfree_from" --n $((paramfree_from + 1000)) \
  --workers $((workers - workers / 2 - quarter)) --out "$out/darts-paramfree.jsonl" &
wait
wc -l "$out"/*.jsonl

#!/usr/bin/env bash
# Ground-truth collection on one GPU for a fixed number of seconds, into separate files under OUT; bring them
# back and append them with 'nas-envs merge OUT/*.jsonl' (the check file is kept apart, see below).
# Small networks are bound by kernel launches, so several one-thread worker processes share the GPU.
#   OUT/darts-gpu-check.jsonl  DARTS noise architectures 0..11 (3 seeds) again, on the GPU: the same jobs as the
#                              CPU records, to compare (nas-envs data-card darts --device-check FILE); then more
#                              DARTS training architectures from index 6000.
#   OUT/darts-gpu.jsonl        DARTS training architectures from index 2000 (far above what the CPU collectors
#                              reach, so the two never train the same job).
#   OUT/fbnet28.jsonl          the 28 x 28 FBNet protocol pilot: noise subset 8 x 3, then training architectures.
# Usage: [WORKERS=16 DEVICE=cuda] scripts/collect_gpu.sh OUT SECONDS
set -uo pipefail
out=${1:?output folder}
seconds=${2:?seconds to run}
workers=${WORKERS:-16}
device=${DEVICE:-cuda}
quarter=$((workers / 4))
deadline=$((SECONDS + seconds))
mkdir -p "$out"
# Every collection stops at the deadline (a stopped collector loses only the trainings in flight).
collect() {
  local left=$((deadline - SECONDS))
  if ((left > 0)); then timeout "$left" python3 -m nas_envs.cli collect --device "$device" "$@"; fi
}
python3 -m nas_envs.cli collect darts --protocol darts-smoke --n 1 --device "$device" --out "$out/smoke.jsonl" || exit 1
rm -f "$out/smoke.jsonl"
(collect darts --subset noise --n 12 --workers "$quarter" --out "$out/darts-gpu-check.jsonl"
 collect darts --start 6000 --n 10000 --workers "$quarter" --out "$out/darts-gpu-2.jsonl") &
(collect fbnet --protocol fbnet-fmnist28-half-e4-v1 --subset noise --n 8 --workers "$quarter" --out "$out/fbnet28.jsonl"
 collect fbnet --protocol fbnet-fmnist28-half-e4-v1 --n 1000 --workers "$quarter" --out "$out/fbnet28.jsonl") &
collect darts --start 2000 --n 6000 --workers $((workers - 2 * quarter)) --out "$out/darts-gpu.jsonl" &
wait
wc -l "$out"/*.jsonl

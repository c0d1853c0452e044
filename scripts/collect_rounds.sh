#!/usr/bin/env bash
# Background ground-truth collection in rounds, so that every kind of record grows together and the mix is right
# at any stop. Round r (from 0) trains, of each stream, the next block of architectures:
#   NOISE     held-out noise-subset architectures, 3 seeds each
#   REGIONS   "region:count ..." extreme regions of the space, one seed each (FBNet: param-free, one-block;
#             DARTS: param-free, pool-heavy)
#   RANDOM_ARCHS  uniformly random training architectures, one seed each
#   TRAJ      with TRAJECTORY=FILE (a committed trajectory of 'nas-envs run'): architectures an optimiser visited
# Before the first round, FIRST="FILE:SEEDS ..." trains every architecture of each committed list ('nas-envs
# incumbents', e.g. an incumbent trajectory for the validity test) with SEEDS seeds.
# WORKERS collector processes run the same rounds and split the jobs between them (lock and claims), one training
# each at a time; the code runs from a snapshot of the committed nas_envs/, so editing the working tree cannot break
# a long collection. Resumable: rerun it and it skips every job already in the file.
# FBNet's collection:
#   PROTOCOL=fbnet-fmnist14-full-e4-v1 NOISE=5 RANDOM_ARCHS=72 REGIONS="param-free:6 one-block:6" \
#     nohup nice -n 10 scripts/collect_rounds.sh fbnet 10 2 &
# Usage: [PROTOCOL=P NOISE=8 RANDOM_ARCHS=30 REGIONS="param-free:2" TRAJECTORY=FILE TRAJ=4 FIRST_ROUND=0 FIRST=""] \
#          scripts/collect_rounds.sh SPACE [ROUNDS] [WORKERS]
set -euo pipefail
space=${1:?space: darts, fbnet or cityseg}
rounds=${2:-100}
workers=${3:-2}
noise=${NOISE:-8}; random=${RANDOM_ARCHS:-30}; regions=${REGIONS:-param-free:2}
trajectory=${TRAJECTORY:-}; traj=${TRAJ:-4}; first=${FIRST_ROUND:-0}
protocol=(); if [[ -n ${PROTOCOL:-} ]]; then protocol=(--protocol "$PROTOCOL"); fi
repo=$(cd "$(dirname "$0")/.." && pwd)
snapshot=$(mktemp -d /tmp/nas-envs-collector.XXXXXX)
git -C "$repo" archive HEAD nas_envs | tar -x -C "$snapshot"
export NAS_ENVS_ASSETS=${NAS_ENVS_ASSETS:-$repo/assets} OMP_NUM_THREADS=1
# From inside the snapshot: `python -m` puts the current directory first on sys.path, ahead of PYTHONPATH, so run
# from a checkout it would import the working tree.
collect() { (cd "$snapshot" && PYTHONPATH="$snapshot" python -m nas_envs.cli collect "$space" "${protocol[@]}" --workers 1 "$@"); }
# Block r of a stream of k architectures per round: indices k*r .. k*(r+1)-1.
block() { echo --start $(($1 * $2)) --n $(($1 * ($2 + 1))); }
rounds_loop() {
  for entry in ${FIRST:-}; do
    local list=$repo/${entry%%:*}
    collect --trajectory "$list" --seeds "${entry##*:}" --n "$(wc -l < "$list")"
  done
  for ((r = first; r < first + rounds; r++)); do
    collect --subset noise --seeds 3 $(block "$noise" "$r")
    for entry in $regions; do collect --source "${entry%%:*}" --seeds 1 $(block "${entry##*:}" "$r"); done
    collect --seeds 1 $(block "$random" "$r")
    # A trajectory that has no more architectures ends its part of the rounds, not the others.
    if [[ -n "$trajectory" ]]; then collect --trajectory "$repo/$trajectory" --seeds 1 $(block "$traj" "$r") || true; fi
  done
}
for ((w = 0; w < workers; w++)); do rounds_loop & done
wait

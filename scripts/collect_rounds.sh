#!/usr/bin/env bash
# Background ground-truth collection in rounds, so every kind of record grows together:
# each round adds NOISE held-out architectures (3 seeds each), RANDOM training architectures,
# PARAMFREE poor-region architectures and, with TRAJECTORY=FILE (a committed trajectory of 'nas-envs run'),
# TRAJ architectures an optimiser visited. Resumable: rerun it and it continues where the file ends.
# The code runs from a snapshot taken at start, so editing the working tree cannot break a long collection.
# Usage: [NOISE=8 RANDOM_ARCHS=30 PARAMFREE=2 TRAJECTORY=FILE TRAJ=4] scripts/collect_rounds.sh SPACE [ROUNDS] [WORKERS]
set -euo pipefail
space=${1:?space: darts, fbnet or cityseg}
rounds=${2:-100}
workers=${3:-2}
noise=${NOISE:-8}; random=${RANDOM_ARCHS:-30}; paramfree=${PARAMFREE:-2}
trajectory=${TRAJECTORY:-}; traj=${TRAJ:-4}
repo=$(cd "$(dirname "$0")/.." && pwd)
snapshot=$(mktemp -d /tmp/nas-envs-collector.XXXXXX)
cp -r "$repo/nas_envs" "$repo/surrogates" "$snapshot/"
export NAS_ENVS_ASSETS=${NAS_ENVS_ASSETS:-$repo/assets}
collect() { PYTHONPATH="$snapshot" python -m nas_envs.cli collect "$space" --workers "$workers" "$@"; }
for ((r = 1; r <= rounds; r++)); do
  collect --subset noise --n $((noise * r))
  collect --n $((random * r))
  if ((paramfree > 0)); then collect --source param-free --n $((paramfree * r)); fi
  if [[ -n "$trajectory" ]]; then collect --trajectory "$repo/$trajectory" --n $((traj * r)); fi
done

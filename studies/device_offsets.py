"""Does putting GPU trainings on the CPU's scale help the surrogate, or leaving them out? Fits the XGB accuracy
ensemble three times on the same fitting split: on every training without and with the device offsets
(``nas-envs data-card darts``: ``device_offsets``), and on its CPU trainings only; prints each fit's metrics on the
CPU-trained noise subset (seed means) and on the CPU records of the held-out split (the same targets for all three).

    python studies/device_offsets.py [--space darts] [--kind xgb]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from nas_envs.assets import DEFAULT_BUNDLES, data_path, resolve_bundle
from nas_envs.fitting.surrogate_fit import fit_and_assess, held_out_split, load_dataset
from nas_envs.groundtruth.analysis import device
from nas_envs.groundtruth.protocols import DEFAULT_PROTOCOL
from nas_envs.groundtruth.records import read_protocol_records
from nas_envs.spaces import get_space


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--space", default="darts", choices=["darts", "fbnet"])
    parser.add_argument("--kind", default="xgb", choices=["xgb", "gin"])
    args = parser.parse_args()
    protocol = DEFAULT_PROTOCOL[args.space]
    space = get_space(args.space)
    cost_table = json.loads((resolve_bundle(DEFAULT_BUNDLES[args.space])[0] / "costs.json").read_text())
    devices = {r["job"]: device(r) for r in read_protocol_records(data_path(protocol), protocol)}
    read = []
    for name, correct, cpu_only in (("every training, without device offsets", False, False),
                                    ("every training, with device offsets", True, False),
                                    ("CPU trainings only", True, True)):
        data = load_dataset(data_path(protocol), protocol, correct_devices=correct)
        read.append(data.data_sha256)
        if len(set(read)) > 1:  # a collector appended between the reads: the fits would see different data
            raise SystemExit("the data file grew between the reads; run again (or pause the collectors)")
        on_cpu = np.array([devices[key] == "cpu" for key in data.keys])
        fit_rows, held_rows = held_out_split(data.sources, data.keys)
        fit_rows = fit_rows[on_cpu[fit_rows]] if cpu_only else fit_rows
        with tempfile.TemporaryDirectory() as folder:
            report = fit_and_assess(args.kind, space, data, cost_table, fit_rows, held_rows[on_cpu[held_rows]],
                                    Path(folder), seed=0)
        noise, held = report.noise_subset["val_accuracy"], report.held_out["val_accuracy"]
        print(f"{name} ({report.fit_records} fitted; offsets {json.dumps(data.device_offsets if correct else {})})\n"
              f"  noise subset ({noise['surrogate_n']} architectures): MAE {100 * noise['surrogate_mae']:.3f} %, "
              f"bias {100 * noise['surrogate_bias']:+.3f} %, R2 {noise['surrogate_r2']:.3f}, "
              f"sparse Kendall tau {noise['surrogate_sparse_kendall_tau']:.3f}\n"
              f"  held out, CPU ({report.held_out_records} records): MAE {100 * held['mae']:.3f} %, "
              f"R2 {held['r2']:.3f}, sparse Kendall tau {held['sparse_kendall_tau']:.3f}")

if __name__ == "__main__":
    main()

"""Plots of surrogate quality."""

from __future__ import annotations

from pathlib import Path


def plot_quality_against_data_size(curve: list[dict], output: Path, title: str) -> None:
    """R2 and sparse Kendall tau of the validation-accuracy model against the number of fitting records."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [row["records"] for row in curve]
    figure, ax = plt.subplots(figsize=(6, 4))
    for split, style in (("held_out", "-"), ("noise_subset", "--")):
        for metric, colour in (("r2", "tab:blue"), ("sparse_kendall_tau", "tab:orange")):
            key = metric if split == "held_out" else f"surrogate_{metric}"
            values = [row[split].get("val_accuracy", {}).get(key, float("nan")) for row in curve]
            label = f"{metric} ({'10% held-out split' if split == 'held_out' else 'noise subset, seed means'})"
            ax.plot(records, values, style, marker="o", color=colour, label=label)
    ax.set_xlabel("training records")
    ax.set_ylabel("score")
    ax.set_title(f"{title}: quality against data size", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=110)
    plt.close(figure)

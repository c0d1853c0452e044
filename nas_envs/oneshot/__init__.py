"""One-shot NAS (DARTS, PC-DARTS, GDAS) on the DARTS space, monitored through the benchmark after every search
epoch (:mod:`nas_envs.oneshot.search`). Needs torch (``nas-envs[groundtruth]``): it trains a supernet."""

#: search epochs of a run unless told otherwise (here, torch-free, for the command line's help)
SEARCH_EPOCHS = 6


def run_line_problem(line: dict) -> str | None:
    """What makes a line no epoch of a one-shot run file (``nas-envs oneshot --out``); None for a good one."""
    if not isinstance(line.get("settings"), dict):
        return "no 'settings' object (not a line of 'nas-envs oneshot')"
    if type(line.get("epoch")) is not int or line["epoch"] < 1:
        return f"'epoch' is {line.get('epoch')!r}; an epoch is an integer >= 1"
    if not isinstance(line.get("genotype"), str) or not isinstance(line.get("surrogates"), dict):
        return "no 'genotype' string or no 'surrogates' object"
    return None

"""One-shot NAS (DARTS, PC-DARTS, GDAS) on the DARTS space, monitored through the benchmark after every search
epoch (:mod:`nas_envs.oneshot.search`). Needs torch (``nas-envs[groundtruth]``): it trains a supernet."""

#: search epochs of a run unless told otherwise (here, torch-free, for the command line's help)
SEARCH_EPOCHS = 6

"""One-shot NAS (DARTS, PC-DARTS, GDAS) on the DARTS space, monitored through the benchmark after every search
epoch (:mod:`nas_envs.oneshot.search`). Needs torch (``nas-envs[groundtruth]``): it trains a supernet."""

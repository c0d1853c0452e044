"""Building bundles: fitting surrogates on the ground truth, scoring them, and writing their model cards. Beside
:mod:`nas_envs.groundtruth`, which it reads; nothing an environment loads imports it."""

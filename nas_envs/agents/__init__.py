"""Search strategies on the nas-envs benchmarks: black-box optimisers, RL controllers, the runner and plots."""
